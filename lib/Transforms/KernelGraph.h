//===- KernelGraph.h - kernels and the streams between them -----*- C++ -*-===//
//
// What placement and routing read from a module of wskernel kernels: every
// kernel (its rectangle and wafer) and every stream (its producer, size and
// consumers). Internal to lib/Transforms; the route checker deliberately
// derives the same facts on its own.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_KERNELGRAPH_H
#define WSC_LIB_TRANSFORMS_KERNELGRAPH_H

#include "wafer/WaferDialect.h"
#include "wskernel/WskernelDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace wsc {

struct GraphKernel {
  wskernel::KernelOp op;
  int64_t wafer = 0;
  int64_t h = 1, w = 1;
  /// Origin, or -1 when not placed yet.
  int64_t x = -1, y = -1;
};

struct GraphStream {
  int producer;     // kernel index
  std::string port; // the producer's port: "out<result>", or "fb"/"fbout<result>" for feedback
  int64_t size;     // words per token
  /// (kernel index, port): "in<operand>", or "fb<operand>" for feedback;
  /// only readers whose body receives on the port.
  llvm::SmallVector<std::pair<int, std::string>, 2> consumers;
  /// Per consumer: the PEs (inside its kernel) that receive the stream.
  llvm::SmallVector<llvm::SmallVector<wskernel::PeBox, 1>, 2> boxes;
  /// The producer's PE that sends it (inside its kernel).
  int64_t srcX = 0, srcY = 0;
};

struct KernelGraph {
  std::vector<GraphKernel> kernels;
  std::vector<GraphStream> streams;
  llvm::DenseMap<mlir::Operation *, int> index;

  /// Collects every kernel of `module` in program order and the streams
  /// between them. Fails (with an error) on a bad `wafer.stage` or origin.
  static mlir::FailureOr<KernelGraph> build(mlir::ModuleOp module, wafer::ArchAttr arch) {
    KernelGraph g;
    bool ok = true;
    module.walk([&](wskernel::KernelOp op) {
      GraphKernel k;
      k.op = op;
      k.h = op.getHeight();
      k.w = op.getWidth();
      if (auto stage = op->getAttrOfType<mlir::IntegerAttr>(wafer::kStageAttrName))
        k.wafer = stage.getInt();
      if (k.wafer < 0 || k.wafer >= arch.getMaxWafers()) {
        op.emitOpError("kernel '") << op.getName() << "' is on wafer " << k.wafer
                                   << ", but the arch has " << arch.getMaxWafers();
        ok = false;
      }
      if (auto origin = op->getAttrOfType<mlir::DenseI64ArrayAttr>(wafer::kOriginAttrName)) {
        if (origin.size() == 3) {
          k.wafer = origin[0];
          k.x = origin[1];
          k.y = origin[2];
        }
      }
      g.index[op] = g.kernels.size();
      g.kernels.push_back(k);
    });
    if (!ok)
      return mlir::failure();
    for (auto [ki, k] : llvm::enumerate(g.kernels)) {
      for (mlir::OpResult r : k.op->getResults()) {
        auto type = mlir::dyn_cast<wskernel::StreamType>(r.getType());
        if (!type)
          continue;
        GraphStream s{int(ki), "out" + std::to_string(r.getResultNumber()), type.getSize(), {}};
        for (mlir::OpOperand &use : r.getUses()) {
          auto it = g.index.find(use.getOwner());
          if (it != g.index.end())
            s.consumers.push_back({it->second, "in" + std::to_string(use.getOperandNumber())});
        }
        g.addStream(std::move(s));
      }
      // Feedback (wskernel::feedbackStreams): "fb" or "fbout<i>" to the
      // readers' "fb<j>" ports.
      for (wskernel::FeedbackStream &f : wskernel::feedbackStreams(k.op)) {
        GraphStream s{int(ki), f.port, f.size, {}};
        for (auto &[reader, port] : f.reads)
          s.consumers.push_back({g.index[reader], port});
        g.addStream(std::move(s));
      }
    }
    return g;
  }

private:
  /// Finds where stream `s` starts and which PEs of each reader receive it
  /// (readers that never receive on their port drop out).
  void addStream(GraphStream s) {
    GraphKernel &p = kernels[s.producer];
    auto src = wskernel::portPes(p.op, s.port, /*sends=*/true);
    s.srcX = src.empty() ? p.w - 1 : wskernel::boundingBox(src).x1;
    s.srcY = src.empty() ? p.h - 1 : wskernel::boundingBox(src).y1;
    llvm::sort(s.consumers);
    llvm::SmallVector<std::pair<int, std::string>, 2> readers;
    for (auto &[c, port] : s.consumers) {
      auto boxes = wskernel::portPes(kernels[c].op, port, /*sends=*/false);
      if (boxes.empty())
        continue;
      readers.push_back({c, port});
      s.boxes.push_back(std::move(boxes));
    }
    s.consumers = std::move(readers);
    streams.push_back(std::move(s));
  }
};

} // namespace wsc

#endif // WSC_LIB_TRANSFORMS_KERNELGRAPH_H
