"""Headless Chromium driven over the DevTools protocol with a plain websocket client: open a page,
screenshot it once it shows more than a loading screen."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image
from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def distinct_colours(png: bytes) -> int:
    """How many colours a screenshot has (a blank or loading page has a handful)."""
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB").resize((350, 225)))
    return len(np.unique(img.reshape(-1, 3), axis=0))


def screenshot_when_drawn(url: str, profile: Path, out: Path, min_colours: int = 400, timeout: float = 150.0) -> int:
    """Open ``url`` in headless Chromium (software GL), screenshot every few seconds until the page
    has ``min_colours`` distinct colours or ``timeout`` passes; save the last shot to ``out`` and
    return its colour count."""
    assert CHROMIUM
    proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader",
                             "--enable-unsafe-swiftshader", "--no-first-run", "--window-size=1400,900",
                             f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline and proc.poll() is None, "chromium did not start"
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        ws_url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
        with connect(ws_url, max_size=None, open_timeout=10) as ws:
            n = 0

            def call(method: str, **params) -> dict:
                nonlocal n
                n += 1
                ws.send(json.dumps({"id": n, "method": method, "params": params}))
                while True:
                    msg = json.loads(ws.recv(timeout=60))
                    if msg.get("id") == n:
                        return msg.get("result", {})

            call("Page.enable")
            call("Page.navigate", url=url)
            deadline = time.monotonic() + timeout
            colours, png = 0, b""
            while time.monotonic() < deadline:
                time.sleep(3)
                png = base64.b64decode(call("Page.captureScreenshot", format="png")["data"])
                colours = distinct_colours(png)
                if colours >= min_colours:
                    break
            out.write_bytes(png)
            return colours
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
