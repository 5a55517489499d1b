"""Where the API's interactive documentation comes from: a local Swagger UI, or none.

FastAPI's own ``/docs`` and ``/redoc`` pages load their scripts from a public CDN and
stay blank on a machine without internet access, so the server never uses them: it
serves ``/docs`` only from a Swagger UI installed on this machine (the optional
package ``swagger-ui-bundle-v2``, part of ``counterfact[serve]``), and otherwise
points to ``/openapi.json``.
"""

from __future__ import annotations

from pathlib import Path

from .._utils._deps import import_optional, is_available

__all__ = ["swagger_ui_assets"]


def swagger_ui_assets() -> Path | None:
    """The folder of a local Swagger UI (5 or later, which reads OpenAPI 3.1), or None
    when no such copy is installed."""
    if not is_available("swagger_ui_bundle"):
        return None
    folder = Path(str(import_optional("swagger_ui_bundle").swagger_ui_path))
    major = folder.name.removeprefix("swagger-ui-").split(".")[0]
    if not major.isdigit() or int(major) < 5 or not (folder / "swagger-ui-bundle.js").is_file():
        return None  # Swagger UI 4 (swagger-ui-bundle 1.x) cannot render FastAPI's OpenAPI 3.1
    return folder
