"""``lakewide docs generate`` / ``lakewide docs serve``: the project as a static site."""

from __future__ import annotations

import functools
import http.server
import sys

import click
from rich.markup import escape

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, pass_options, profile_options
from lakewide.vocabulary.errors import ConfigError


@click.group()
def docs() -> None:
    """The docs site: models, sources, columns, lineage and the DAG (target/docs)."""


@docs.command()
@profile_options
@pass_options
def generate(options: Options) -> None:
    """Write target/docs/index.html, manifest.json and catalog.json (no JVM needed)."""
    from lakewide.artifacts.docs.documents import build_documents
    from lakewide.artifacts.docs.site import DOCS_DIR, write_site
    from lakewide.state.readers import metadata_reader

    manifest = options.manifest()
    reader = metadata_reader(manifest.output)
    documents = build_documents(manifest, reader)
    index = write_site(documents, manifest.project.target_path / DOCS_DIR)
    models, sources = len(documents.manifest["nodes"]), len(documents.manifest["sources"])
    types = "from Iceberg metadata where the tables exist" if reader else "inferred from the SQL"
    console.print(
        f"docs for {models} model(s) and {sources} source(s) -> "
        f"{manifest.project.relative(index)} (column types {types})"
    )
    troubled = [n["name"] for n in documents.manifest["nodes"].values() if n["problems"]]
    if troubled:
        console.print(
            f"[yellow]warning:[/yellow] {len(troubled)} model(s) could not be compiled or traced "
            f"fully: {escape(', '.join(troubled))} (each model's page says why)"
        )


@docs.command()
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@pass_options
def serve(options: Options, port: int, host: str) -> None:
    """Serve target/docs over HTTP (run `lakewide docs generate` first); Ctrl-C stops."""
    from lakewide.artifacts.docs.site import DOCS_DIR
    from lakewide.project.settings import load_project

    folder = load_project(options.project_dir).target_path / DOCS_DIR
    if not (folder / "index.html").is_file():
        raise ConfigError(f"{folder / 'index.html'} does not exist; run `lakewide docs generate`")
    handler = functools.partial(_QuietHandler, directory=str(folder))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        raise ConfigError(
            f"cannot serve on {host}:{port} ({err.strerror or err}); choose another --port "
            "(0: any free port) or --host"
        ) from None
    with server:
        url = f"http://{host}:{server.server_address[1]}/"
        console.print(f"serving {folder} at {url} (Ctrl-C stops)")
        sys.stdout.flush()  # a reader of a pipe learns the URL (and the port 0 chose) now
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            console.print("stopped")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        """No line per request."""
