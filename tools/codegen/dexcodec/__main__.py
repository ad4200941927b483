"""protoc entry point: `--dexcodec_out=lang=python:DIR` or `lang=typescript`.

Writes `codec.py` (Python, for `dex_agents_contracts/_gen/`) or `codec.ts`
(TypeScript, for `src/gen/`) for every file of the request at once, because a
codec module covers the whole package.
"""

from __future__ import annotations

import sys

from google.protobuf.compiler import plugin_pb2

from dexcodec._model import ModelError, load_model
from dexcodec._python import emit_python
from dexcodec._typescript import emit_typescript


def main() -> None:
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    response = plugin_pb2.CodeGeneratorResponse()
    response.supported_features = plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    params = dict(p.split("=", 1) for p in request.parameter.split(",") if p)
    try:
        model = load_model(request)
        lang = params.get("lang")
        if lang == "python":
            files = emit_python(model)
        elif lang == "typescript":
            files = emit_typescript(model)
        else:
            raise ModelError(f"unknown lang={lang!r}; use lang=python or lang=typescript")
    except ModelError as error:
        response.error = str(error)
    else:
        for name, content in files.items():
            response.file.add(name=name, content=content)
    sys.stdout.buffer.write(response.SerializeToString())


if __name__ == "__main__":
    main()
