"""pytest-lsp fixtures: ``unveil serve`` in a subprocess, driven by recorded editor profiles.

One server per profile and test module (``scope="module"``) keeps the suite fast; each test
uses its own document URI (fixture ``uri``). ``client`` is parametrised over the Neovim 0.11 (UTF-8 first, inlay-hint refresh) and VS Code
1.65 (UTF-16, no inlay-hint capability) profiles. ``encoded_client`` forces one position
encoding through ``general.positionEncodings``. The client records every
``publishDiagnostics`` (``client.publishes``) and counts ``workspace/inlayHint/refresh``
requests (``client.inlay_refreshes``).
"""

from __future__ import annotations

import sys

import attrs
import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "unveil", "serve"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.publishes = []
    client.inlay_refreshes = 0
    client.registrations = []

    def on_publish(c: LanguageClient, params: types.PublishDiagnosticsParams):
        c.diagnostics[params.uri] = params.diagnostics
        c.publishes.append(params)

    def on_refresh(c: LanguageClient, params: None):
        c.inlay_refreshes += 1

    def on_register(c: LanguageClient, params: types.RegistrationParams):
        c.registrations.extend(params.registrations)

    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: on_publish,
            types.WORKSPACE_INLAY_HINT_REFRESH: on_refresh,
            types.CLIENT_REGISTER_CAPABILITY: on_register,
        },
    )
    return client


#: initializationOptions for ``client``: a layer below the (empty) pulled workspace configuration
INIT_OPTIONS = {"unveil": {"severity": {"HID012": "info"}, "inlayHintMinTokens": 0}}  # hints on every heading

CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


@pytest_lsp.fixture(params=["neovim", "visual_studio_code"], config=CONFIG, scope="module")
async def client(request, lsp_client: LanguageClient):
    lsp_client.set_configuration({}, section="unveil")
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri="file:///tmp/unveil-e2e",
            initialization_options=INIT_OPTIONS,
        )
    )
    lsp_client.profile = request.param
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=["utf-8", "utf-16", "utf-32"], config=CONFIG, scope="module")
async def encoded_client(request, lsp_client: LanguageClient):
    caps = client_capabilities("neovim")
    caps = attrs.evolve(caps, general=types.GeneralClientCapabilities(position_encodings=[request.param]))
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=caps))
    lsp_client.encoding = result.capabilities.position_encoding
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def uri(request) -> str:
    """A document URI of its own for each test (``.../<test name>/CLAUDE.md``)."""
    return f"file:///tmp/unveil-e2e/{request.node.originalname}/CLAUDE.md"
