"""What agents connect to: the MCP server (stdio and HTTP) and its access tokens.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "HttpServer": "mcp_http",
    "is_loopback": "mcp_http",
    "Backend": "mcp_server",
    "serve": "mcp_server",
    "mcp_tokens": None,
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
