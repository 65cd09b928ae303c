//! A fake gRPC service for a test: the calls the test needs written out, every other call of the
//! service answered `UNIMPLEMENTED` with its name, by [`fake_service!`](crate::fake_service) — so that a
//! fake manager or player host is the few calls it fakes, not a page of stubs.

/// Implements the tonic service trait `$service` (in scope, as its generated server module names it)
/// for `$fake`: the methods in the `impl` block as written, and each one listed under `unimplemented`
/// (`method(Request) -> Response;`, the message types in scope) answering `Status::unimplemented`
/// with its name; and each one listed under `unimplemented streams` (`method(Request) -> Stream of
/// Response;`, a server-streaming call and its stream type's name in the trait) likewise.
#[macro_export]
macro_rules! fake_service {
    (
        impl $service:ident for $fake:ident {
            $($answered:tt)*
        }
        unimplemented {
            $($method:ident($request:ident) -> $response:ident;)*
        }
        $(unimplemented streams {
            $($streaming:ident($stream_request:ident) -> $stream:ident of $stream_response:ident;)*
        })?
    ) => {
        #[$crate::tonic::async_trait]
        impl $service for $fake {
            $($answered)*

            $(
                async fn $method(
                    &self,
                    _: $crate::tonic::Request<$request>,
                ) -> ::std::result::Result<$crate::tonic::Response<$response>, $crate::tonic::Status> {
                    ::std::result::Result::Err($crate::tonic::Status::unimplemented(stringify!($method)))
                }
            )*

            $($(
                type $stream = $crate::tonic::codegen::BoxStream<$stream_response>;

                async fn $streaming(
                    &self,
                    _: $crate::tonic::Request<$stream_request>,
                ) -> ::std::result::Result<$crate::tonic::Response<Self::$stream>, $crate::tonic::Status> {
                    ::std::result::Result::Err($crate::tonic::Status::unimplemented(stringify!($streaming)))
                }
            )*)?
        }
    };
}
