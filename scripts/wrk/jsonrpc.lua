-- wrk script: POST one league.v2 JSON-RPC call to /mcp. The call comes from the environment:
-- BENCH_METHOD (default "ping"), BENCH_PARAMS (the params object as JSON, default {}) and BENCH_TOKEN
-- (sent as `Authorization: Bearer`, e.g. the operator token for queries; none when unset).
local method = os.getenv("BENCH_METHOD") or "ping"
local params = os.getenv("BENCH_PARAMS") or "{}"
local token = os.getenv("BENCH_TOKEN")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if token then
  wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.body = '{"jsonrpc":"2.0","method":"' .. method .. '","params":' .. params .. ',"id":1}'

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  io.write(string.format("%s: %.0f requests/s, p50 %.2f ms, p99 %.2f ms, errors %d, %d requests\n",
    method, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, errors, summary.requests))
end
