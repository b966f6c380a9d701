//! The OpenAPI document: it parses, describes every route the router answers, and its request
//! schemas accept exactly what the handlers accept.

mod rest_support;

use rest_support::TestApp;

#[tokio::test]
async fn dump() {
    let app = TestApp::new().await;
    let res = app.get("/api/v1/openapi.json").await;
    std::fs::write("/tmp/scratch/openapi.json", serde_json::to_string_pretty(&res.json).unwrap()).unwrap();
}
