"""The JSON-RPC protocol of `devfix lsp`: pygls's, answering every request.

pygls reports a request whose params do not deserialize with a `window/showMessage` only and
sends no response, so the client waits for ever. Here such a request gets the JSON-RPC error it
deserves (-32602 Invalid Params, or -32603), and the server carries on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol


@dataclass(frozen=True)
class RejectedRequest:
    """A request whose params could not be read: answered with `error`, never handled."""

    id: Any
    error: JsonRpcException


class DevfixProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return RejectedRequest(data["id"], error)
            raise

    def handle_message(self, message) -> None:
        if isinstance(message, RejectedRequest):
            self._send_response(message.id, error=message.error.to_response_error())
            return
        super().handle_message(message)
