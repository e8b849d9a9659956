//===- OnnxModelFile.cpp - read an ONNX file without copying weights ------===//
//
// A 124M-parameter model is a 500+ MiB protobuf. Parsing it whole copies every
// weight. Instead we walk the wire format, rebuild the model without the
// initializers' raw_data payloads (recording where they are in the mapped
// file), and parse that small remainder with the ONNX protobuf classes.
//
//===----------------------------------------------------------------------===//
#include "OnnxModelFile.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace wsc;

namespace {
// Field numbers of the ONNX protobuf schema that the scan needs.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kWireVarint = 0, kWireFixed64 = 1, kWireLen = 2, kWireFixed32 = 5;

struct Reader {
  const uint8_t *begin, *pos, *end;
  std::string &error;

  bool varint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end)
        return fail("truncated varint");
      uint8_t byte = *pos++;
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return fail("malformed varint");
  }
  bool fail(const char *what) {
    if (error.empty())
      error = std::string("not a valid ONNX protobuf: ") + what + " at byte " +
              std::to_string(pos - begin);
    return false;
  }
  /// Reads one field header and the extent of its payload.
  bool field(uint32_t &number, uint32_t &wire, const uint8_t *&payload, uint64_t &length) {
    uint64_t tag;
    if (!varint(tag))
      return false;
    number = tag >> 3;
    wire = tag & 7;
    if (number == 0)
      return fail("field number 0");
    switch (wire) {
    case kWireVarint: {
      payload = pos;
      uint64_t ignored;
      if (!varint(ignored))
        return false;
      length = pos - payload;
      return true;
    }
    case kWireFixed64:
      length = 8;
      break;
    case kWireFixed32:
      length = 4;
      break;
    case kWireLen:
      if (!varint(length))
        return false;
      break;
    default:
      return fail("unsupported wire type");
    }
    if (length > uint64_t(end - pos))
      return fail("truncated field");
    payload = pos;
    pos += length;
    return true;
  }
};

void appendVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

void appendLenField(std::string &out, uint32_t number, const std::string &payload) {
  appendVarint(out, (uint64_t(number) << 3) | kWireLen);
  appendVarint(out, payload.size());
  out += payload;
}

/// Copies the fields of one message to `out`, except those `replace`
/// handles (it returns true for them, after writing what it wants).
bool rewriteFields(Reader r, std::string &out,
                   llvm::function_ref<bool(uint32_t number, uint32_t wire, const uint8_t *payload,
                                           uint64_t length, bool &ok)>
                       replace) {
  while (r.pos < r.end) {
    const uint8_t *start = r.pos, *payload;
    uint32_t number, wire;
    uint64_t length;
    if (!r.field(number, wire, payload, length))
      return false;
    bool ok = true;
    if (replace(number, wire, payload, length, ok)) {
      if (!ok)
        return false;
      continue;
    }
    out.append(reinterpret_cast<const char *>(start), r.pos - start);
  }
  return true;
}

/// Copies a TensorProto without raw_data; records raw_data's extent.
bool stripTensor(Reader r, const uint8_t *fileBegin, std::string &out, TensorBytes &bytes) {
  return rewriteFields(r, out, [&](uint32_t number, uint32_t wire, const uint8_t *payload,
                                   uint64_t length, bool &) {
    if (number != kTensorRawData || wire != kWireLen)
      return false;
    bytes.offset = payload - fileBegin;
    bytes.length = length;
    return true;
  });
}

bool stripGraph(Reader r, const uint8_t *fileBegin, std::string &out,
                std::vector<TensorBytes> &initializers) {
  return rewriteFields(r, out, [&](uint32_t number, uint32_t wire, const uint8_t *payload,
                                   uint64_t length, bool &ok) {
    if (number != kGraphInitializer || wire != kWireLen)
      return false;
    std::string tensor;
    TensorBytes bytes;
    ok = stripTensor(Reader{r.begin, payload, payload + length, r.error}, fileBegin, tensor, bytes);
    initializers.push_back(bytes);
    appendLenField(out, number, tensor);
    return true;
  });
}
} // namespace

bool wsc::loadOnnxModelFile(const std::string &path, OnnxModelFile &out, std::string &error) {
  out.path = path;
  // A device or a FIFO is no model, and /dev/zero would be read for ever.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    error = "not a regular file, not an ONNX model";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read file: " + buffer.getError().message();
    return false;
  }
  out.buffer = std::move(*buffer);
  if (out.buffer->getBufferSize() == 0) {
    error = "empty file, not an ONNX model";
    return false;
  }
  auto *begin = reinterpret_cast<const uint8_t *>(out.buffer->getBufferStart());
  Reader r{begin, begin, begin + out.buffer->getBufferSize(), error};
  std::string stripped;
  bool sawGraph = false;
  if (!rewriteFields(r, stripped, [&](uint32_t number, uint32_t wire, const uint8_t *payload,
                                      uint64_t length, bool &ok) {
        if (number != kModelGraph || wire != kWireLen)
          return false;
        std::string graph;
        ok = stripGraph(Reader{begin, payload, payload + length, error}, begin, graph,
                        out.initializerBytes);
        appendLenField(stripped, number, graph);
        sawGraph = true;
        return true;
      }))
    return false;
  if (!out.model.ParseFromString(stripped)) {
    error = "not a valid ONNX protobuf (the ModelProto does not parse)";
    return false;
  }
  if (!sawGraph || !out.model.has_graph()) {
    error = "not an ONNX model: it has no graph";
    return false;
  }
  if (out.model.graph().initializer_size() != static_cast<int>(out.initializerBytes.size())) {
    error = "not a valid ONNX protobuf: initializer count changed while parsing";
    return false;
  }
  // Raw bytes found in the file belong to the model file itself.
  for (TensorBytes &bytes : out.initializerBytes)
    if (bytes.length || bytes.offset)
      bytes.file = path;
  return true;
}
