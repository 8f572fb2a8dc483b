use super::*;

#[test]
fn every_tool_has_its_arguments_checked() {
    let tools = Server::tool_router().list_all();
    assert_eq!(tools.len(), 16, "{:?}", tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>());
    for t in tools {
        assert!(arguments_fit(&t.name, &serde_json::json!({})).is_some(), "{} is not checked", t.name);
    }
}
