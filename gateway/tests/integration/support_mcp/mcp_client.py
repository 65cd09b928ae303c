"""A real MCP client against the league gateway: the official MCP Python SDK (PyPI `mcp`) over the
streamable HTTP transport, with `Authorization: Bearer <token>` on every request.

    python mcp_client.py URL TOKEN MODE [MODE...]

For each MODE ("legacy": the `initialize` handshake every MCP client before 2026-07-28 performs; "auto":
the SDK's default, which probes `server/discover` and falls back to `initialize`) it connects, lists the
tools, calls `get_standings`, and a query with a wrong token; then prints one JSON object, by mode, of
what it saw. The Rust test (gateway/tests/integration/mcp.rs) asserts on that.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def structured(result):
    return {
        "is_error": result.is_error,
        "structured": result.structured_content,
        "text": [block.text for block in result.content if getattr(block, "type", None) == "text"],
    }


async def session(url: str, token: str, mode: str) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, raise_exceptions=True, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            standings = await client.call_tool("get_standings", {})
            refused = await client.call_tool("get_schedule", {"auth_token": "not-a-token"})
            return {
                "protocol_version": client.protocol_version,
                "server": client.server_info.name if client.server_info else None,
                "tools": sorted(tool.name for tool in tools.tools),
                "get_standings": structured(standings),
                "refused": structured(refused),
            }


async def main() -> None:
    url, token, *modes = sys.argv[1:]
    seen = {}
    for mode in modes:
        seen[mode] = await session(url, token, mode)
    print(json.dumps(seen, indent=2, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
