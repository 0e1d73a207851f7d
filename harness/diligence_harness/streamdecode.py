"""Turn the raw (arrival ns, body bytes) reads of one response into a request record.

Runs after the cell, off the event loop. Implements the timestamp rules of
docs/metrics.md#timestamps: an event's arrival time is the read that completed it;
`t_first` is the first event with non-empty content (role-only and empty
chunks never count, a pitfall of vLLM's client); `t_last` is the last event that
carried content (not the usage-only chunk nor `[DONE]`).
"""

import hashlib
import json


def split_sse_events(pieces: list[tuple[int, bytes]]) -> tuple[list[tuple[int, str]], int]:
    """(arrival ns, data payload) per SSE event, and the number of comment lines (pings).

    Events may be split across reads at any byte, even inside a UTF-8 character,
    and several may arrive in one read; both are handled by buffering bytes.
    """
    events, pings, buf = [], 0, b""
    for t_ns, piece in pieces:
        buf += piece
        if b"\r" in buf:
            buf = buf.replace(b"\r\n", b"\n")
        while True:
            end = buf.find(b"\n\n")
            if end < 0:
                break
            block, buf = buf[:end], buf[end + 2 :]
            data_lines = []
            for line in block.decode("utf-8", errors="replace").split("\n"):
                if line.startswith(":"):
                    pings += 1
                elif line.startswith("data:"):
                    data_lines.append(line[5:].removeprefix(" "))
            if data_lines:
                events.append((t_ns, "\n".join(data_lines)))
    return events, pings


def _delta_text(choice: dict, api: str) -> tuple[str, str]:
    """(content, reasoning) carried by one choice of a chunk."""
    if api == "completions":
        return choice.get("text") or "", ""
    delta = choice.get("delta") or {}
    reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
    return delta.get("content") or "", reasoning


def decode_stream(record: dict, pieces: list[tuple[int, bytes]], api: str) -> None:
    """Fill the record's chunk list, first/last times, token counts and error from the body."""
    for name in ("t_first_ns", "t_first_out_ns", "t_last_ns", "error"):
        record.setdefault(name, None)
    events, record["pings"] = split_sse_events(pieces)
    send = record["t_send_ns"]
    chunks, output, finish_reason, usage, saw_done, stream_error = [], [], None, None, False, None
    for t_ns, data in events:
        if data.strip() == "[DONE]":
            saw_done = True
            continue
        try:
            event = json.loads(data)
        except ValueError:
            stream_error = stream_error or f"unparseable SSE data: {data[:80]!r}"
            continue
        if not isinstance(event, dict):
            continue
        if event.get("error"):
            stream_error = stream_error or f"error event: {json.dumps(event['error'])[:200]}"
            continue
        content, reasoning = "", ""
        for choice in event.get("choices") or []:
            c, r = _delta_text(choice, api)
            content, reasoning = content + c, reasoning + r
            finish_reason = choice.get("finish_reason") or finish_reason
        if event.get("usage"):
            usage = event["usage"]
        usage_tokens = (event.get("usage") or {}).get("completion_tokens")
        chunks.append([t_ns - send, len(content), len(reasoning), usage_tokens])
        if content or reasoning:
            output.append(content)
            record["t_last_ns"] = t_ns
            if record.get("t_first_ns") is None:
                record["t_first_ns"] = t_ns
        if content and record.get("t_first_out_ns") is None:
            record["t_first_out_ns"] = t_ns
    record["chunks"] = chunks
    record["saw_done"] = saw_done
    record["finish_reason"] = finish_reason
    _record_token_counts(record, chunks, usage)
    text = "".join(output)
    record["output_chars"] = len(text)
    record["output_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    if stream_error:
        record["error"] = {"kind": "stream_error", "detail": stream_error}


def _record_token_counts(record: dict, chunks: list, usage: dict | None) -> None:
    """osl_server from usage, osl_client from content chunks; both kept
    (docs/metrics.md#per-request-metrics)."""
    record["osl_server"] = (usage or {}).get("completion_tokens")
    record["usage_prompt_tokens"] = (usage or {}).get("prompt_tokens")
    # Without a tokenizer (stdlib only) the client count is the number of content
    # chunks: exact for one-token-per-chunk servers, an undercount when bundled.
    record["osl_client"] = sum(1 for c in chunks if c[1] or c[2])
    record["osl_client_method"] = "content_chunks"
    if record["osl_server"] is not None:
        record["osl"], record["osl_source"] = record["osl_server"], "server_usage"
    else:
        record["osl"], record["osl_source"] = record["osl_client"], "client_content_chunks"


def classify_error(record: dict, status: int | None, transport_error: str | None) -> None:
    """docs/metrics.md#errors: truncated streams count as errors."""
    if record.get("error"):
        return
    if transport_error and status is None:
        kind = "timeout" if transport_error.startswith("timeout") else "transport"
        record["error"] = {"kind": kind, "detail": transport_error}
    elif status is not None and not 200 <= status < 300:
        record["error"] = {"kind": f"http_{status}", "detail": None}
    elif transport_error:
        record["error"] = {"kind": "truncated", "detail": transport_error}
    elif record.get("t_first_ns") is None:
        record["error"] = {"kind": "no_content", "detail": None}
    elif record.get("finish_reason") is None:
        record["error"] = {"kind": "truncated", "detail": "stream ended without finish_reason"}
    elif record.get("finish_reason") == "error":
        record["error"] = {"kind": "finish_error", "detail": None}
