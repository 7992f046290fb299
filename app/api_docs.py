"""`/docs`: Swagger UI served from this host, under the site's strict Content-Security-Policy.

FastAPI's default /docs page loads Swagger UI from a CDN and starts it with an inline script; both
are refused here (no third-party requests, no inline scripts). The Swagger UI assets come from the
`fastapi-offline` package (installed from PyPI, not vendored) and are served under /docs/assets;
the page starts them with a small script of our own at /docs/init.js.
"""

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"

_INIT_JS = """\
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout"
  });
});
"""

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API documentation</title>
<link rel="stylesheet" href="{root}/docs/assets/swagger-ui.css">
<link rel="icon" href="{root}/docs/assets/favicon.png">
</head>
<body>
<noscript><p>This page needs JavaScript. The API description is at
<a href="{root}{openapi_url}">{openapi_url}</a>; README explains each endpoint.</p></noscript>
<div id="swagger-ui" data-openapi-url="{root}{openapi_url}"></div>
<script src="{root}/docs/assets/swagger-ui-bundle.js"></script>
<script src="{root}/docs/init.js"></script>
</body>
</html>
"""


def install_api_docs(app: FastAPI) -> None:
    """Serve Swagger UI at /docs from local assets (create the app with docs_url=None)."""
    app.mount("/docs/assets", StaticFiles(directory=ASSETS_DIR), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def api_docs(request: Request) -> HTMLResponse:
        """Interactive API documentation (Swagger UI)."""
        root = request.scope.get("root_path", "")
        return HTMLResponse(
            _PAGE.format(title=app.title, root=root, openapi_url=app.openapi_url or "")
        )

    @app.get("/docs/init.js", include_in_schema=False)
    def api_docs_init() -> Response:
        """The script that starts Swagger UI on /docs."""
        return Response(_INIT_JS, media_type="text/javascript")
