use super::*;

#[test]
fn every_tool_has_its_arguments_checked() {
    let tools = Server::tool_router().list_all();
    assert_eq!(tools.len(), 19, "{:?}", tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>());
    for t in tools {
        assert!(arguments_fit(&t.name, &serde_json::json!({})).is_some(), "{} is not checked", t.name);
    }
}

/// Whatever a tool returns reaches the agent through the filter: a path holding a token
/// (a project directory named after one) is masked in a result and in an error.
#[test]
fn tool_results_and_errors_are_redacted_on_their_way_out() {
    let token = "npm_zJr4i0B3JrTAwR4y9ojfljoQoaF1LlqsajAI";
    let result = serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text",
        "text": format!("project      /tmp/x/r1-{token}\n")}], "isError": false}});
    let out = redacted(&result.to_string());
    assert!(!out.contains(token) && out.contains("r1-[REDACTED:npm-token]"), "{out}");
    let error = serde_json::json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": format!("cannot read /tmp/{token}")}});
    let out = redacted(&error.to_string());
    assert!(!out.contains(token), "{out}");
    // Anything else passes as it came.
    let other = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#;
    assert_eq!(redacted(other), other);
    assert_eq!(redacted("not json"), "not json");
}
