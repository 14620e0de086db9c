"""An OTLP/HTTP trace receiver for the gateway bench (`TRACES=1 bench.sh`): answers every
export 200 with an empty ExportTraceServiceResponse, and counts the spans it decoded (with the
official messages, `opentelemetry-proto`, when installed; else only requests and bytes).
With `fast` (`SINK=fast`) it decodes nothing: it reads each body and answers on a kept-alive
connection, so the bench measures the gateway's cost of export, not a Python decoder's on the
same cores. Prints its counts on SIGTERM. Usage: otlp_sink.py PORT [fast]"""
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
except ImportError:  # counts requests and bytes only
    ExportTraceServiceRequest = None

FAST = sys.argv[2:3] == ["fast"]
counts = {"exports": 0, "bytes": 0, "spans": 0}


class Sink(BaseHTTPRequestHandler):
    # Keep-alive: the exporter's client reuses its connection, as it does with a collector.
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        counts["exports"] += 1
        counts["bytes"] += len(body)
        if ExportTraceServiceRequest is not None and not FAST:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            counts["spans"] += sum(
                len(s.spans) for r in request.resource_spans for s in r.scope_spans
            )
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def report(*_):
    print(
        "otlp sink: {exports} exports, {bytes} bytes, {spans} spans decoded".format(**counts),
        file=sys.stderr,
        flush=True,
    )
    sys.exit(0)


signal.signal(signal.SIGTERM, report)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
