"""The raw HTTP/1.1 reader and the SSE decoder: splits, pings, empty chunks, truncation."""

import asyncio
import json

from diligence_harness.streamclient import ResponseReader, build_request, parse_endpoint
from diligence_harness.streamdecode import classify_error, decode_stream, split_sse_events


def _reader() -> ResponseReader:
    loop = asyncio.new_event_loop()
    return ResponseReader(done=loop.create_future())


def _chunked(*payloads: bytes) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads)
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + body + b"0\r\n\r\n"


def test_chunked_body_survives_any_split():
    wire = _chunked(b"data: one\n\n", b"data: two\n\n")
    for size in (1, 2, 3, 7, len(wire)):
        reader = _reader()
        for t, start in enumerate(range(0, len(wire), size)):
            reader.feed(t, wire[start : start + size])
        assert reader.done.done()
        assert reader.status == 200
        assert b"".join(p for _, p in reader.body_pieces) == b"data: one\n\ndata: two\n\n"


def test_content_length_and_close_delimited_bodies():
    reader = _reader()
    reader.feed(1, b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\n\r\nno")
    assert not reader.done.done()
    reader.feed(2, b"pe!")
    assert reader.done.done() and reader.status == 401 and reader.t_hdr_ns == 1
    reader = _reader()
    reader.feed(1, b"HTTP/1.0 200 OK\r\n\r\nabc")
    reader.connection_lost(5, None)
    assert reader.error is None and reader.t_end_ns == 5 and not reader.keep_alive


def test_cut_chunked_stream_is_an_error():
    reader = _reader()
    reader.feed(1, _chunked(b"data: x\n\n")[:-5])
    reader.connection_lost(9, None)
    assert reader.error.startswith("connection closed mid-response")


def _event(content=None, role=False, finish=None, usage=None) -> bytes:
    delta = {"role": "assistant"} if role else {}
    if content is not None:
        delta["content"] = content
    event = {"choices": [{"delta": delta, "finish_reason": finish}]}
    if usage is not None:
        event["usage"] = usage
    return b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"


def test_events_split_inside_a_utf8_character_and_bundled_in_one_read():
    first = _event("é")
    cut = first.index("é".encode()) + 1  # between the two bytes of é
    pieces = [(10, first[:cut]), (20, first[cut:] + b": ping\n\n" + _event("x") + _event("y"))]
    events, pings = split_sse_events(pieces)
    assert [t for t, _ in events] == [20, 20, 20]
    assert json.loads(events[0][1])["choices"][0]["delta"]["content"] == "é"
    assert pings == 1


def test_empty_role_chunk_does_not_set_ttft_and_usage_chunk_not_e2e():
    usage = {"prompt_tokens": 3, "completion_tokens": 2}
    pieces = [
        (1_000, _event("", role=True)),
        (5_000, _event("Hel")),
        (9_000, _event("lo", finish="length")),
        (9_500, b'data: {"choices": [], "usage": ' + json.dumps(usage).encode() + b"}\n\n"),
        (9_600, b"data: [DONE]\n\n"),
    ]
    record = {"t_send_ns": 0}
    decode_stream(record, pieces, "chat")
    classify_error(record, 200, None)
    assert record["t_first_ns"] == 5_000
    assert record["t_last_ns"] == 9_000
    assert record["osl"] == 2 and record["osl_source"] == "server_usage"
    assert record["osl_client"] == 2
    assert record["chunks"][0] == [1_000, 0, 0, None]
    assert record["error"] is None and record["saw_done"]


def test_stream_without_finish_reason_is_truncated():
    record = {"t_send_ns": 0}
    decode_stream(record, [(1, _event("a")), (2, b"data: [DONE]\n\n")], "chat")
    classify_error(record, 200, None)
    assert record["error"]["kind"] == "truncated"


def test_completions_text_and_http_errors():
    record = {"t_send_ns": 0}
    payload = {"choices": [{"text": "hi", "finish_reason": "length"}]}
    decode_stream(record, [(3, b"data: " + json.dumps(payload).encode() + b"\n\n")], "completions")
    classify_error(record, 200, None)
    assert record["t_first_ns"] == 3 and record["error"] is None
    failed = {"t_send_ns": 0}
    decode_stream(failed, [], "chat")
    classify_error(failed, 503, None)
    assert failed["error"]["kind"] == "http_503"


def test_request_is_serialised_once_with_request_id():
    endpoint = parse_endpoint("http://127.0.0.1:8000/v1")
    assert endpoint.base_path == "" and endpoint.port == 8000
    wire = build_request(endpoint, "POST", "/v1/completions", b"{}", {"X-Request-Id": "r-1"})
    assert wire.startswith(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n")
    assert b"X-Request-Id: r-1\r\n" in wire and wire.endswith(b"Content-Length: 2\r\n\r\n{}")
    assert parse_endpoint("https://user:pw@api.example/x").display == "https://api.example/x"
