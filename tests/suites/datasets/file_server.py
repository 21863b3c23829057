"""A real HTTP server on 127.0.0.1 serving files from a folder, counting requests.

`stall_after` makes it send the headers and that many bytes of a file, then hang (a download to
kill half-way); `redirects` maps a path to the URL it redirects to (302).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class FileServer:
    """The running server: its base URL, the folder it serves, and the paths asked for."""

    url: str
    root: Path
    requests: list[str] = field(default_factory=list)
    stall_after: int | None = None
    redirects: dict[str, str] = field(default_factory=dict)


@contextmanager
def serve(root: Path) -> Iterator[FileServer]:
    """Serve `root` on a free port for the duration of the block."""
    state = FileServer(url="", root=root)

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            state.requests.append(self.path)
            if self.path in state.redirects:
                self.send_response(302)
                self.send_header("Location", state.redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            if state.stall_after is None:
                return super().do_GET()
            data = (root / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: state.stall_after])
            self.wfile.flush()
            time.sleep(30)  # the client is killed meanwhile
            return None

        def log_message(self, format, *args):
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
