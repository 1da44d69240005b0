"""Authenticated agents (issue 11, item 6): `attach --header`, a token in the URL query, and TLS.

A local wss:// agent on 127.0.0.1 with a self-signed certificate made in the test (openssl
CLI): verified with --ca-file, refused with a one-line certificate error without it, accepted
with --insecure. The headers arrive at the server; the token and header values appear in no
output (result, event log, meter, stderr).
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess

import pytest

pytest.importorskip("websockets")
from test_attach_faults import _wav, fake_agent  # noqa: E402

from livejudge.commands.cli import main  # noqa: E402
from livejudge.sources.ws import parse_header, redact_url  # noqa: E402

TOKEN = "tok-SECRET-7f3a9"
HEADER_VALUE = "Bearer hdr-SECRET-c41d"


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl CLI to make a self-signed certificate")
    d = tmp_path_factory.mktemp("tls")
    key, crt = d / "key.pem", d / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(crt), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return crt, key


def _server_ssl(cert) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    return ctx


def _recording_agent(seen: list):
    async def handler(ws):
        seen.append({"path": ws.request.path, "headers": dict(ws.request.headers.raw_items())})
        async for _ in ws:
            pass
    return handler


def _run(tmp_path, capsys, url, *extra):
    out, ev = tmp_path / "out.json", tmp_path / "ev.jsonl"
    code = main(["attach", "--ws-url", url, "--protocol", "twilio", "--no-playback",
                 "--input-wav", _wav(tmp_path), "--judge", "none", "--display", "plain",
                 "--duration-s", "0.8", "--json", str(out), "--events", str(ev), *extra])
    cap = capsys.readouterr()
    texts = {"result": out.read_text(), "events": ev.read_text(), "stdout": cap.out, "stderr": cap.err}
    return code, json.loads(texts["result"]), texts


def _no_secrets(texts: dict) -> None:
    for where, text in texts.items():
        assert TOKEN not in text, f"URL token leaked into {where}"
        assert "hdr-SECRET" not in text, f"header value leaked into {where}"


def test_ca_file_verifies_and_headers_arrive(tmp_path, capsys, cert, monkeypatch):
    import livejudge.outputs.meter as meter

    titles: list = []
    real = meter.make_display
    monkeypatch.setattr(meter, "make_display",
                        lambda s, title="", mode="auto", **kw: titles.append(title) or real(s, title, mode, **kw))
    seen: list = []
    with fake_agent(_recording_agent(seen), ssl=_server_ssl(cert)) as port:
        code, doc, texts = _run(tmp_path, capsys, f"wss://127.0.0.1:{port}/agent?token={TOKEN}&lang=en",
                                "--ca-file", str(cert[0]), "--header", f"Authorization: {HEADER_VALUE}",
                                "--header", "X-Api-Key: hdr-SECRET-2")
    assert code == 0, texts["stderr"]
    assert doc["source"]["ended"] == "duration" and doc["source"]["tls"] == "verified"
    h = seen[0]["headers"]
    assert h["Authorization"] == HEADER_VALUE and h["X-Api-Key"] == "hdr-SECRET-2"
    assert seen[0]["path"] == f"/agent?token={TOKEN}&lang=en"  # the real URL went to the agent
    assert doc["source"]["headers"] == ["Authorization", "X-Api-Key"]  # names only
    assert doc["source"]["url"] == f"wss://127.0.0.1:{port}/agent?token=REDACTED&lang=REDACTED"
    connected = [e for e in doc["framework_events"] if e["kind"] == "ws.connected"]
    assert connected and "REDACTED" in connected[0]["url"]
    assert titles == [f"attach wss://127.0.0.1:{port}/agent?token=REDACTED&lang=REDACTED"]  # the meter's title
    _no_secrets({**texts, "meter title": titles[0]})


def test_self_signed_refused_without_ca_file(tmp_path, capsys, cert):
    with fake_agent(_recording_agent([]), ssl=_server_ssl(cert)) as port:
        code, doc, texts = _run(tmp_path, capsys, f"wss://127.0.0.1:{port}/?token={TOKEN}",
                                "--header", f"Authorization: {HEADER_VALUE}")
    assert code == 1
    line = [ln for ln in texts["stderr"].splitlines() if "TLS certificate" in ln]
    assert len(line) == 1 and "self-signed certificate" in line[0] and "--ca-file" in line[0], texts["stderr"]
    assert "Traceback" not in texts["stderr"]
    assert doc["source"]["ended"] == "failed: tls" and any("TLS certificate" in e for e in doc["errors"])
    _no_secrets(texts)


def test_insecure_skips_verification(tmp_path, capsys, cert):
    with fake_agent(_recording_agent([]), ssl=_server_ssl(cert)) as port:
        code, doc, texts = _run(tmp_path, capsys, f"wss://127.0.0.1:{port}/?token={TOKEN}", "--insecure")
    assert code == 0, texts["stderr"]
    assert doc["source"]["tls"] == "unverified (--insecure)"
    _no_secrets(texts)


def test_unreachable_error_redacts_token(tmp_path, capsys):
    from livejudge.commands.attach import free_port

    code, doc, texts = _run(tmp_path, capsys, f"ws://127.0.0.1:{free_port()}/?token={TOKEN}",
                            "--header", f"Authorization: {HEADER_VALUE}")
    assert code == 1 and "cannot reach the agent" in texts["stderr"]
    _no_secrets(texts)


@pytest.mark.parametrize("flags,needle", [
    (["--header", "no-colon-here"], "--header wants 'Name: value'"),
    (["--header", "Bad Name: hdr-SECRET-x"], "not a valid HTTP header name"),
    (["--ca-file", "/nonexistent.pem"], "--ca-file and --insecure apply to wss:// URLs only"),
])
def test_bad_auth_flags_one_line(tmp_path, capsys, flags, needle):
    code = main(["attach", "--ws-url", f"ws://127.0.0.1:1/?token={TOKEN}", "--no-playback",
                 "--input-wav", _wav(tmp_path), "--judge", "none", *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0]
    assert "hdr-SECRET" not in err[0] and TOKEN not in err[0]


def test_missing_ca_file_one_line(tmp_path, capsys):
    code = main(["attach", "--ws-url", "wss://127.0.0.1:1/", "--no-playback", "--input-wav", _wav(tmp_path),
                 "--judge", "none", "--ca-file", str(tmp_path / "none.pem")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "none.pem not found" in err[0]


def test_redact_url_and_parse_header():
    assert redact_url("wss://u:pw@h:1/p?token=abc&x=1#f") == "wss://u:REDACTED@h:1/p?token=REDACTED&x=REDACTED"
    assert redact_url("ws://h/p?SECRET") == "ws://h/p?REDACTED"
    assert redact_url("ws://h/p") == "ws://h/p"
    assert parse_header("Authorization:  Bearer x y ") == ("Authorization", "Bearer x y")
    with pytest.raises(ValueError) as e:
        parse_header("X-Key: a\r\nInjected: 1")
    assert "line break" in str(e.value) and "Injected" not in str(e.value)
