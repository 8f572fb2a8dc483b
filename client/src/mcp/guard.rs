//! The JSON-RPC checks in front of the MCP library: each line from the client is looked at
//! before rmcp reads it, and the ones the specification says must be answered with an error
//! are answered here, as rmcp does not (it drops an unparseable line silently, answers a
//! request without `method` without its `id`, and a `tools/call` without a tool name with
//! "method not found").
//!
//! - not JSON: -32700 (Parse error), `id: null`;
//! - a batch, or not a request, notification or response: -32600 (Invalid Request), with
//!   the request's `id` when it has one;
//! - `tools/call` without a tool name, or with arguments that do not fit the tool: -32602
//!   (Invalid params).

use serde_json::{json, Value};

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the MCP library.
    Pass,
    /// Answer this instead (one JSON-RPC error line).
    Answer(Value),
    /// Nothing (an empty line).
    Skip,
}

/// Checks one line; `arguments_fit` says whether a tool's arguments fit it (`Err` with why),
/// `None` for a tool it does not know.
pub fn check(line: &str, arguments_fit: impl Fn(&str, &Value) -> Option<Result<(), String>>) -> Verdict {
    if line.trim().is_empty() {
        return Verdict::Skip;
    }
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, &format!("Parse error: {e}"))),
    };
    let Some(obj) = v.as_object() else {
        let why = if v.is_array() { "batches are not supported" } else { "a message is a JSON object" };
        return Verdict::Answer(error(Value::Null, -32600, &format!("Invalid Request: {why}")));
    };
    let id = obj.get("id").cloned();
    let is_response = obj.contains_key("result") || obj.contains_key("error");
    let method = obj.get("method");
    match (method, &id) {
        (None, Some(id)) if !is_response => {
            return Verdict::Answer(error(id.clone(), -32600, "Invalid Request: no \"method\""));
        }
        (Some(m), _) if !m.is_string() => {
            return Verdict::Answer(error(
                id.unwrap_or(Value::Null),
                -32600,
                "Invalid Request: \"method\" is not a string",
            ));
        }
        _ => {}
    }
    if let Some(p) = obj.get("params").filter(|p| !p.is_object() && !p.is_array()) {
        let what = if p.is_null() { "null" } else { "not an object" };
        return Verdict::Answer(error(
            id.unwrap_or(Value::Null),
            -32600,
            &format!("Invalid Request: \"params\" is {what}"),
        ));
    }
    if method.and_then(Value::as_str) == Some("tools/call") {
        let Some(id) = id else { return Verdict::Pass };
        let params = obj.get("params");
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Verdict::Answer(error(
                id,
                -32602,
                "Invalid params: tools/call needs {\"name\": …, \"arguments\": {…}}",
            ));
        };
        let args = params.and_then(|p| p.get("arguments")).cloned().unwrap_or_else(|| json!({}));
        if !args.is_object() {
            return Verdict::Answer(error(
                id,
                -32602,
                &format!("Invalid params: the arguments of {name} are an object"),
            ));
        }
        if let Some(Err(why)) = arguments_fit(name, &args) {
            return Verdict::Answer(error(id, -32602, &format!("Invalid params for {name}: {why}")));
        }
    }
    Verdict::Pass
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(name: &str, args: &Value) -> Option<Result<(), String>> {
        (name == "memory_search").then(|| match args.get("query") {
            Some(Value::String(_)) => Ok(()),
            _ => Err("query: a string is needed".into()),
        })
    }

    fn answer(line: &str) -> Value {
        match check(line, fit) {
            Verdict::Answer(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn what_the_specification_says_must_be_answered_is_answered() {
        let a = answer("this is not json");
        assert_eq!((a["id"].clone(), a["error"]["code"].as_i64()), (Value::Null, Some(-32700)));
        let a = answer(r#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(7), Some(-32600)));
        let a = answer(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"p"}"#);
        assert_eq!((a["id"].as_str(), a["error"]["code"].as_i64()), (Some("x"), Some(-32600)));
        let a = answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#);
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(2), Some(-32602)));
        let a = answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#);
        assert_eq!(a["error"]["code"], -32602);
        let a = answer(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":5}}}"#,
        );
        assert_eq!(a["error"]["code"], -32602);
        assert!(a["error"]["message"].as_str().unwrap().contains("query"));
        let a = answer("[1, 2]");
        assert_eq!((a["id"].clone(), a["error"]["code"].as_i64()), (Value::Null, Some(-32600)));
        let a = answer(r#"{"jsonrpc":"2.0","id":5,"method":7}"#);
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(5), Some(-32600)));
    }

    #[test]
    fn good_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"unknown_tool"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
        ] {
            assert_eq!(check(line, fit), Verdict::Pass, "{line}");
        }
        assert_eq!(check("  ", fit), Verdict::Skip);
    }
}
