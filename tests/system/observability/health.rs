//! The manager's gRPC health status (`grpc.health.v1.Health`) says what its `/readyz` says: SERVING
//! once its database is migrated and while it answers, NOT_SERVING once it does not — for `Check` and
//! for a `Watch` already open.

use league_runtime::grpc::GrpcChannel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::harness::{self, http_get};

fn request(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.to_owned(),
    }
}

fn status(response: Option<HealthCheckResponse>) -> ServingStatus {
    response.expect("a status").status()
}

/// Both names the manager's health is asked by (the server's, "", and its service's) answer `expected`.
async fn serving_as(health: &mut HealthClient<GrpcChannel>, expected: ServingStatus) {
    for service in ["", "league.v2.ManagerService"] {
        let answer = health.check(request(service)).await.expect("a status");
        assert_eq!(answer.into_inner().status(), expected, "{service:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_managers_grpc_health_follows_its_database() {
    let manager = harness::start_manager().await;
    let admin = manager.process.admin_url.clone();
    let channel = league_runtime::grpc::channel(&manager.process.url).expect("a channel");
    let mut health = HealthClient::new(channel);
    let check = async |health: &mut HealthClient<_>, service: &str| {
        health
            .check(request(service))
            .await
            .map(|answer| answer.into_inner().status())
    };

    // Built, so migrated, and the database answers.
    assert_eq!(http_get(&admin, "/readyz").await.0, 200);
    serving_as(&mut health, ServingStatus::Serving).await;
    assert_eq!(
        check(&mut health, "league.v2.Nothing")
            .await
            .expect_err("an unknown service")
            .code(),
        tonic::Code::NotFound
    );
    let mut watch = health.watch(request("")).await.expect("a watch").into_inner();
    assert_eq!(
        status(watch.message().await.expect("a message")),
        ServingStatus::Serving
    );

    // The database goes away under the manager.
    manager.drop_database().await;
    assert_eq!(http_get(&admin, "/readyz").await.0, 503);
    serving_as(&mut health, ServingStatus::NotServing).await;
    assert_eq!(
        status(watch.message().await.expect("a message")),
        ServingStatus::NotServing,
        "a watcher hears of the change"
    );
    drop(watch);
    manager.stop().await;
}
