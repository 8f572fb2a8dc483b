//! The JSON-RPC 2.0 envelope: parsing and validation of incoming messages, encoding of
//! outgoing ones, and the error codes both sides agree on.
//!
//! One message per line; see [`crate::wire::frame`]. Requests carry an `id` and get exactly one
//! response; notifications (no `id`) get none, not even an error.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The only `jsonrpc` version accepted.
pub const JSONRPC: &str = "2.0";

/// Error codes. The standard ones come from the JSON-RPC 2.0 specification; the
/// application ones live in the -32000 range that it reserves for servers.
pub mod code {
    /// The line is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Valid JSON, but not a JSON-RPC 2.0 request or notification.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method exists, but its params do not fit.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The daemon failed in a way that is its own fault.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A failure the message explains (bad path, unwritable file, ...).
    pub const APP_ERROR: i64 = -32000;
    /// Too many connections are open; try again shortly.
    pub const SERVER_BUSY: i64 = -32001;
    /// The frame was larger than [`crate::wire::frame::MAX_FRAME`]; the connection is closed.
    pub const FRAME_TOO_LARGE: i64 = -32002;
    /// The daemon is shutting down and takes no new work.
    pub const SHUTTING_DOWN: i64 = -32003;
    /// Client and daemon speak different protocol versions.
    pub const INCOMPATIBLE: i64 = -32004;
}

/// A JSON-RPC error object, as sent on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i64,
    /// A sentence a person can act on.
    pub message: String,
    /// Optional machine-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with the given code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
    /// -32700, with the parser's explanation.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(code::PARSE_ERROR, format!("parse error: not valid JSON ({detail})"))
    }
    /// -32600, saying what is wrong with the envelope.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_REQUEST, format!("invalid request: {detail}"))
    }
    /// -32601 for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(code::METHOD_NOT_FOUND, format!("method not found: {method:?}"))
    }
    /// -32602 for `method`, with the reason; `data` holds both apart (`{"method", "detail"}`)
    /// so that a client can show its user the reason without the internal method's name.
    pub fn invalid_params(method: &str, detail: impl fmt::Display) -> Self {
        let detail = detail.to_string();
        Self {
            code: code::INVALID_PARAMS,
            message: format!("invalid params for {method:?}: {detail}"),
            data: Some(serde_json::json!({"method": method, "detail": detail})),
        }
    }

    /// What a person is told: the reason alone for bad params, else the message.
    pub fn for_people(&self) -> &str {
        self.data.as_ref().and_then(|d| d.get("detail")).and_then(Value::as_str).unwrap_or(&self.message)
    }
    /// -32000: an application failure explained by `message`.
    pub fn app(message: impl Into<String>) -> Self {
        Self::new(code::APP_ERROR, message)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// A validated incoming request or notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// `None` for a notification: no response is sent.
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// `params` as sent; `Null` when absent.
    pub params: Value,
}

/// A frame that is not a valid request: the id to answer with (`Null` when it could not be
/// read) and the error. Per the specification, such errors are always answered, even when
/// the message looked like a notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// Id for the error response.
    pub id: Value,
    /// What is wrong.
    pub error: RpcError,
}

fn reject(id: Value, error: RpcError) -> Box<Rejected> {
    Box::new(Rejected { id, error })
}

/// Parses and validates one frame.
pub fn parse_incoming(frame: &[u8]) -> Result<Incoming, Box<Rejected>> {
    let value: Value = serde_json::from_slice(frame).map_err(|e| reject(Value::Null, RpcError::parse_error(e)))?;
    let mut obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => {
            return Err(reject(Value::Null, RpcError::invalid_request("batch requests are not supported")))
        }
        other => {
            let kind = json_kind(&other);
            return Err(reject(Value::Null, RpcError::invalid_request(format!("expected an object, got {kind}"))));
        }
    };
    let id = take_id(&mut obj)?;
    let answer_id = id.clone().unwrap_or(Value::Null);
    let fail = |detail: String| reject(answer_id.clone(), RpcError::invalid_request(detail));
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == JSONRPC => {}
        Some(other) => return Err(fail(format!("\"jsonrpc\" must be \"2.0\", got {other}"))),
        None => return Err(fail("missing \"jsonrpc\": \"2.0\"".into())),
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(other) => return Err(fail(format!("\"method\" must be a string, got {}", json_kind(&other)))),
        None => return Err(fail("missing \"method\"".into())),
    };
    let params = match obj.remove("params") {
        None => Value::Null,
        Some(p @ (Value::Object(_) | Value::Array(_))) => p,
        Some(other) => {
            return Err(fail(format!("\"params\" must be an object or an array, got {}", json_kind(&other))))
        }
    };
    Ok(Incoming { id, method, params })
}

fn take_id(obj: &mut Map<String, Value>) -> Result<Option<Value>, Box<Rejected>> {
    match obj.remove("id") {
        None => Ok(None),
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Ok(Some(id)),
        Some(other) => Err(reject(
            Value::Null,
            RpcError::invalid_request(format!("\"id\" must be a string, a number or null, got {}", json_kind(&other))),
        )),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Serialize)]
struct RequestOut<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
}

/// Encodes a request (`id` given) or a notification (`id` `None`) as one line, newline included.
pub fn encode_request<P: Serialize>(id: Option<u64>, method: &str, params: &P) -> Vec<u8> {
    let mut line =
        serde_json::to_vec(&RequestOut { jsonrpc: JSONRPC, method, params, id }).unwrap_or_else(unreachable_json);
    line.push(b'\n');
    line
}

#[derive(Serialize)]
struct ResponseOut<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
    id: &'a Value,
}

/// Encodes the response to request `id`, newline included.
pub fn encode_response(id: &Value, outcome: &Result<Value, RpcError>) -> Vec<u8> {
    let (result, error) = match outcome {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    let mut line =
        serde_json::to_vec(&ResponseOut { jsonrpc: JSONRPC, result, error, id }).unwrap_or_else(unreachable_json);
    line.push(b'\n');
    line
}

// Serializing these envelopes cannot fail: every field is a string, a number or an
// already-built `Value`, and map keys are strings.
fn unreachable_json(e: serde_json::Error) -> Vec<u8> {
    panic!("serializing a JSON-RPC envelope failed: {e}")
}

/// A response as received by a client.
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    /// The id of the request this answers (`Null` for errors on unreadable requests).
    #[serde(default)]
    pub id: Value,
    /// Present on success.
    #[serde(default)]
    pub result: Option<Value>,
    /// Present on failure.
    #[serde(default)]
    pub error: Option<RpcError>,
}

impl Response {
    /// Parses one response line.
    pub fn parse(frame: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(frame)
    }
    /// The result, or the error the daemon sent.
    pub fn into_result(self) -> Result<Value, RpcError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.result.unwrap_or(Value::Null)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err_code(line: &str) -> (Value, i64) {
        let r = parse_incoming(line.as_bytes()).expect_err(line);
        (r.id, r.error.code)
    }

    #[test]
    fn accepts_requests_and_notifications() {
        let r = parse_incoming(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert_eq!(r, Incoming { id: Some(json!(7)), method: "ping".into(), params: Value::Null });
        let n = parse_incoming(br#"{"jsonrpc":"2.0","method":"hook","params":{"a":1}}"#).unwrap();
        assert_eq!(n.id, None);
        assert_eq!(n.params, json!({"a":1}));
        let s = parse_incoming(br#"{"jsonrpc":"2.0","id":"x","method":"m","params":[1]}"#).unwrap();
        assert_eq!(s.id, Some(json!("x")));
        let null_id = parse_incoming(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).unwrap();
        assert_eq!(null_id.id, Some(Value::Null));
    }

    #[test]
    fn rejects_bad_envelopes_with_the_right_code() {
        assert_eq!(err_code("not json"), (Value::Null, code::PARSE_ERROR));
        assert_eq!(err_code("{\"jsonrpc\":\"2.0\""), (Value::Null, code::PARSE_ERROR));
        assert_eq!(err_code("[1,2]"), (Value::Null, code::INVALID_REQUEST));
        assert_eq!(err_code("42"), (Value::Null, code::INVALID_REQUEST));
        assert_eq!(err_code(r#"{"id":1,"method":"m"}"#), (json!(1), code::INVALID_REQUEST));
        assert_eq!(err_code(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#), (json!(1), code::INVALID_REQUEST));
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","id":2}"#), (json!(2), code::INVALID_REQUEST));
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","id":3,"method":5}"#), (json!(3), code::INVALID_REQUEST));
        assert_eq!(
            err_code(r#"{"jsonrpc":"2.0","id":4,"method":"m","params":"x"}"#),
            (json!(4), code::INVALID_REQUEST)
        );
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#), (Value::Null, code::INVALID_REQUEST));
        // An invalid notification is still answered, with a null id.
        assert_eq!(err_code(r#"{"jsonrpc":"2.0","method":"m","params":1}"#), (Value::Null, code::INVALID_REQUEST));
    }

    #[test]
    fn round_trips_requests_and_responses() {
        let line = encode_request(Some(3), "status", &json!({"path":"/x"}));
        assert_eq!(*line.last().unwrap(), b'\n');
        let parsed = parse_incoming(&line[..line.len() - 1]).unwrap();
        assert_eq!(parsed.method, "status");
        assert_eq!(parsed.id, Some(json!(3)));

        let ok = encode_response(&json!(3), &Ok(json!({"pong":true})));
        let resp = Response::parse(&ok).unwrap();
        assert_eq!(resp.id, json!(3));
        assert_eq!(resp.into_result().unwrap(), json!({"pong":true}));

        let err = encode_response(&Value::Null, &Err(RpcError::method_not_found("nope")));
        let text = String::from_utf8(err.clone()).unwrap();
        assert!(!text.contains("result"), "{text}");
        let e = Response::parse(&err).unwrap().into_result().unwrap_err();
        assert_eq!(e.code, code::METHOD_NOT_FOUND);
        assert!(e.message.contains("nope"));
    }
}
