//! `grpc.health.v1.Health` whose status follows a service's [`Readiness`]: SERVING while `/readyz`
//! would answer 200, NOT_SERVING otherwise. The readiness is asked on every `Check` (as `/readyz` asks
//! it on every probe) and when a `Watch` starts; a watcher is told of every change those observe.

use tokio::sync::Mutex;
use tonic::{Request, Response, Status};
use tonic_health::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_health::server::{HealthReporter, HealthService, WatchStream};

use crate::admin::Readiness;

/// The health service of a server reporting `services` (the overall `""` and the named service).
#[derive(Debug)]
pub(crate) struct ReadinessHealth {
    readiness: Readiness,
    reporter: HealthReporter,
    statuses: HealthService,
    services: [&'static str; 2],
    /// The status last reported, so watchers hear of changes only.
    last: Mutex<ServingStatus>,
}

impl ReadinessHealth {
    pub(crate) async fn new(readiness: Readiness, service: &'static str) -> ReadinessHealth {
        let reporter = HealthReporter::new();
        let health = ReadinessHealth {
            statuses: HealthService::from_health_reporter(reporter.clone()),
            reporter,
            readiness,
            services: ["", service],
            last: Mutex::new(ServingStatus::Unknown),
        };
        health.refresh().await;
        health
    }

    /// Asks the readiness and reports what it says.
    async fn refresh(&self) {
        let status = if self.readiness.is_ready().await {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        let mut last = self.last.lock().await;
        if *last != status {
            for service in self.services {
                self.reporter.set_service_status(service, status).await;
            }
            *last = status;
        }
    }
}

#[tonic::async_trait]
impl Health for ReadinessHealth {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        self.refresh().await;
        self.statuses.check(request).await
    }

    type WatchStream = WatchStream;

    async fn watch(&self, request: Request<HealthCheckRequest>) -> Result<Response<WatchStream>, Status> {
        self.refresh().await;
        self.statuses.watch(request).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use tonic::codegen::tokio_stream::StreamExt;
    use tonic_health::pb::health_check_response::ServingStatus as Wire;

    use super::*;

    async fn check(health: &ReadinessHealth, service: &str) -> Result<Wire, tonic::Code> {
        let request = Request::new(HealthCheckRequest {
            service: service.to_owned(),
        });
        match health.check(request).await {
            Ok(response) => Ok(response.into_inner().status()),
            Err(status) => Err(status.code()),
        }
    }

    #[tokio::test]
    async fn serving_exactly_while_ready() {
        let readiness = Readiness::new();
        let health = ReadinessHealth::new(readiness.clone(), "league.v2.Test").await;
        for service in ["", "league.v2.Test"] {
            assert_eq!(check(&health, service).await, Ok(Wire::NotServing), "{service:?}");
        }
        assert_eq!(check(&health, "other").await, Err(tonic::Code::NotFound));

        let request = Request::new(HealthCheckRequest::default());
        let mut watch = health.watch(request).await.expect("a watch").into_inner();
        let next = async |watch: &mut WatchStream| {
            let answer = watch.next().await?;
            Some(answer.expect("a status").status())
        };
        assert_eq!(next(&mut watch).await, Some(Wire::NotServing));

        readiness.set_ready(true);
        assert_eq!(check(&health, "league.v2.Test").await, Ok(Wire::Serving));
        assert_eq!(next(&mut watch).await, Some(Wire::Serving));

        // The readiness check fails (the manager's database stops answering).
        let answering = Arc::new(AtomicBool::new(false));
        let probe = answering.clone();
        readiness.set_check(move || {
            let probe = probe.clone();
            async move { probe.load(Ordering::SeqCst) }
        });
        assert_eq!(check(&health, "").await, Ok(Wire::NotServing));
        assert_eq!(next(&mut watch).await, Some(Wire::NotServing));
        answering.store(true, Ordering::SeqCst);
        assert_eq!(check(&health, "").await, Ok(Wire::Serving));
        assert_eq!(next(&mut watch).await, Some(Wire::Serving));
    }
}
