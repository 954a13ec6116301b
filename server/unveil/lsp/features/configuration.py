"""Configuration: ``initializationOptions``, then ``workspace/configuration`` (section ``unveil``),
re-pulled on ``workspace/didChangeConfiguration``.

Layers, lowest first: defaults < ``initializationOptions`` (either the section itself or
``{"unveil": {...}}``) < the pulled ``unveil`` section. A client answering ``null`` keeps the lower
layers (:meth:`Settings.merged` ignores non-mappings). Clients that cannot answer
``workspace/configuration`` may push the settings in the ``didChangeConfiguration`` payload.
Keys: ``select``, ``ignore``, ``severity``, ``prices``, ``pricesFile``, ``models``, ``inlayHints``,
``debounceMs`` (see :class:`unveil.core.config.Settings`).

Also installs the LSP-correct workspace (:mod:`unveil.lsp.textdoc`) during ``initialize`` and
starts loading the tokenizer.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from unveil.core.config import Settings
from unveil.lsp.textdoc import install_workspace

log = logging.getLogger(__name__)


async def pull(ls) -> object | None:
    """The client's ``unveil`` section, or ``None`` when it cannot or does not answer."""
    if not ls.supports_configuration:
        return None
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="unveil")])
        )
    except Exception as exc:  # noqa: BLE001
        log.warning("workspace/configuration failed: %s", exc)
        return None
    return result[0] if result else None


def adds_nothing(section) -> bool:
    """Whether the client's ``unveil`` section, laid over the project configuration as an editor
    layer (:func:`unveil.core.project.editor_layer`), changes no setting: not a mapping (``null``),
    or only empty values (``{}``, which many clients answer ``workspace/configuration`` with).
    Then the analyses started before it arrived stand (no second analysis of each open file)."""
    from unveil.core.project import editor_layer

    layer = editor_layer(section)
    return not isinstance(layer, dict) or not layer


def wants_isolation(options) -> bool:
    """Whether ``initializationOptions`` ask for no project configuration: ``isolated: true`` at the
    top level or in the ``unveil`` section (the VS Code client sends it for an untrusted
    workspace, Workspace Trust; other editors may set it for repositories they do not trust)."""
    if not isinstance(options, dict):
        return False
    section = options.get("unveil") if isinstance(options.get("unveil"), dict) else options
    return bool(section.get("isolated") or options.get("isolated"))


def register(server) -> None:
    from unveil.lsp.registry import safe

    @server.feature(types.INITIALIZE)
    @safe()
    def initialize(ls, params: types.InitializeParams) -> None:
        install_workspace(ls)
        ls.isolated = wants_isolation(params.initialization_options)
        ls.init_settings = Settings().merged(params.initialization_options)
        ls.editor_layers = [params.initialization_options, None]  # over the project config
        ls.settings = ls.init_settings

    @server.feature(types.INITIALIZED)
    @safe()
    async def initialized(ls, params: types.InitializedParams) -> None:
        asyncio.get_running_loop().create_task(ls.watch_tokenizer())
        caps = getattr(ls._caps(), "workspace", None)
        dcc = getattr(caps, "did_change_configuration", None)
        if getattr(dcc, "dynamic_registration", False):
            try:
                await ls.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id=str(uuid.uuid4()),
                                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                register_options=types.DidChangeConfigurationRegistrationOptions(section="unveil"),
                            )
                        ]
                    )
                )
            except Exception as exc:  # noqa: BLE001
                log.info("could not register for didChangeConfiguration: %s", exc)
        section = await pull(ls)
        if section is not None:
            before = ls.settings
            ls.settings = ls.init_settings.merged(section)
            ls.editor_layers = [ls.editor_layers[0], section]
            if not adds_nothing(section) or ls.settings != before:
                ls.reanalyse_all()
        ls.after_initialized()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @safe()
    async def did_change_configuration(ls, params: types.DidChangeConfigurationParams) -> None:
        if ls.supports_configuration:
            section = await pull(ls)
        else:
            section = params.settings
        ls.settings = ls.init_settings.merged(section)
        ls.editor_layers = [ls.editor_layers[0], section]
        ls.reanalyse_all()
        ls.refresh_inlay_hints()
