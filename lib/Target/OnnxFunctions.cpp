//===- OnnxFunctions.cpp - inline a model's local functions ---------------===//
//
// Exporters that keep a module or an aten op as a unit (torch's dynamo
// exporter, export_modules_as_functions) write it once as a FunctionProto
// in ModelProto.functions and call it as a node of the function's domain.
// The importer reads plain graphs, so every call is replaced by the
// function's nodes before import: formal inputs and outputs become the
// call's values, the body's other values get a name unique to the call,
// and attribute references take the call's attribute (or the function's
// default).
//
//===----------------------------------------------------------------------===//
#include "OnnxFunctions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <vector>

#include <google/protobuf/unknown_field_set.h>

using namespace wsc;

namespace {

/// FunctionProto.attribute_proto (field 11, ONNX 1.13 on): the attributes
/// with defaults. The ONNX headers wsc builds with predate the field, so it
/// is read from the message's unknown fields.
constexpr int kFunctionAttributeProto = 11;
/// Calls nested in calls can multiply a graph's nodes exponentially: past
/// this many inlined nodes the model is refused, before memory runs out.
constexpr int64_t kMaxInlinedNodes = int64_t(1) << 20;

std::string key(const std::string &domain, const std::string &name) {
  return domain + "\x1f" + name;
}

/// A local function and its attribute defaults.
struct Function {
  const onnx::FunctionProto *proto;
  std::map<std::string, onnx::AttributeProto> defaults;
};

struct Inliner {
  llvm::StringMap<Function> functions;
  int defaultOpset = 0;
  int calls = 0;
  int64_t inlined = 0;
  std::string &error;
  /// The functions being expanded, outermost first, and the graph's node
  /// whose call started it (errors name it).
  std::vector<std::string> active;
  const onnx::NodeProto *site = nullptr;

  static int defaultDomainVersion(
      const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &imports) {
    for (const auto &imp : imports)
      if (imp.domain().empty() || imp.domain() == "ai.onnx")
        return int(imp.version());
    return 0;
  }

  const Function *callee(const onnx::NodeProto &node) const {
    auto it = functions.find(key(node.domain(), node.op_type()));
    return it == functions.end() ? nullptr : &it->second;
  }

  static std::string label(const onnx::NodeProto &node) {
    return "node '" + (node.name().empty() ? node.op_type() : node.name()) + "' (" +
           node.domain() + "." + node.op_type() + ")";
  }

  bool fail(const std::string &why) {
    error = label(*site) + ": " + why;
    return false;
  }

  /// The function's attribute defaults, by name.
  static std::map<std::string, onnx::AttributeProto>
  defaults(const onnx::FunctionProto &f) {
    std::map<std::string, onnx::AttributeProto> out;
    const auto &unknown = f.GetReflection()->GetUnknownFields(f);
    for (int i = 0; i < unknown.field_count(); ++i) {
      const auto &field = unknown.field(i);
      onnx::AttributeProto a;
      if (field.number() == kFunctionAttributeProto &&
          field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
          a.ParseFromString(field.length_delimited()))
        out[a.name()] = a;
    }
    return out;
  }

  /// One call being inlined: the body's values renamed for it, its
  /// attribute references resolved against the call site.
  struct Call {
    std::map<std::string, std::string> formals;
    std::string prefix;
    const onnx::NodeProto *caller;
    const std::map<std::string, onnx::AttributeProto> *defaults;

    std::string rename(const std::string &name) const {
      if (name.empty())
        return name;
      auto it = formals.find(name);
      return it != formals.end() ? it->second : prefix + name;
    }
    /// False when a reference names no attribute of the call or the
    /// function: the node then takes the op's own default.
    bool resolve(onnx::AttributeProto &a) const {
      if (a.ref_attr_name().empty())
        return true;
      std::string ref = a.ref_attr_name(), name = a.name();
      const onnx::AttributeProto *given = nullptr;
      for (const auto &c : caller->attribute())
        if (c.name() == ref)
          given = &c;
      if (!given) {
        auto it = defaults->find(ref);
        if (it == defaults->end())
          return false;
        given = &it->second;
      }
      a = *given;
      a.set_name(name);
      return true;
    }
    void renameNode(onnx::NodeProto &n) const {
      for (auto &v : *n.mutable_input())
        v = rename(v);
      for (auto &v : *n.mutable_output())
        v = rename(v);
      auto *attrs = n.mutable_attribute();
      for (int i = attrs->size() - 1; i >= 0; --i) {
        if (!resolve(*attrs->Mutable(i))) {
          attrs->DeleteSubrange(i, 1);
          continue;
        }
        onnx::AttributeProto &a = *attrs->Mutable(i);
        if (a.has_g())
          renameGraph(*a.mutable_g());
        for (auto &g : *a.mutable_graphs())
          renameGraph(g);
      }
    }
    void renameGraph(onnx::GraphProto &g) const {
      for (auto &v : *g.mutable_input())
        v.set_name(rename(v.name()));
      for (auto &v : *g.mutable_output())
        v.set_name(rename(v.name()));
      for (auto &v : *g.mutable_value_info())
        v.set_name(rename(v.name()));
      for (auto &t : *g.mutable_initializer())
        t.set_name(rename(t.name()));
      for (auto &n : *g.mutable_node())
        renameNode(n);
    }
  };

  /// Appends `node` to `out`, or the body of the function it calls.
  bool expand(const onnx::NodeProto &node,
              google::protobuf::RepeatedPtrField<onnx::NodeProto> &out) {
    const Function *called = callee(node);
    if (!called) {
      onnx::NodeProto &copy = *out.Add() = node;
      return expandSubgraphs(copy);
    }
    const onnx::FunctionProto *f = called->proto;
    if (active.empty())
      site = &node;
    std::string name = f->domain() + "." + f->name();
    if (llvm::is_contained(active, name))
      return fail("function '" + name + "' calls itself");
    int version = defaultDomainVersion(f->opset_import());
    if (version && version != defaultOpset)
      return fail("function '" + name + "' imports opset " + std::to_string(version) +
                  " of the default domain, the model " + std::to_string(defaultOpset));
    if (node.input_size() > f->input_size() || node.output_size() > f->output_size())
      return fail("passes " + std::to_string(node.input_size()) + " inputs and " +
                  std::to_string(node.output_size()) + " outputs to function '" + name +
                  "' of " + std::to_string(f->input_size()) + " and " +
                  std::to_string(f->output_size()));
    Call call{{}, "", &node, &called->defaults};
    call.prefix = (node.name().empty() ? node.op_type() : node.name()) + "#" +
                  std::to_string(calls++) + "/";
    for (int i = 0; i < f->input_size(); ++i)
      call.formals[f->input(i)] = i < node.input_size() ? node.input(i) : "";
    // An output the call does not take still needs a name no one else has.
    for (int i = 0; i < f->output_size(); ++i)
      call.formals[f->output(i)] = i < node.output_size() && !node.output(i).empty()
                                       ? node.output(i)
                                       : call.prefix + f->output(i);
    inlined += f->node_size();
    if (inlined > kMaxInlinedNodes)
      return fail("inlining local functions makes more than " + std::to_string(kMaxInlinedNodes) +
                  " nodes");
    active.push_back(name);
    for (const auto &inner : f->node()) {
      onnx::NodeProto body = inner;
      call.renameNode(body);
      body.set_name(call.prefix + (inner.name().empty() ? inner.op_type() : inner.name()));
      if (!expand(body, out))
        return false;
    }
    active.pop_back();
    return true;
  }

  bool expandSubgraphs(onnx::NodeProto &node) {
    for (auto &a : *node.mutable_attribute()) {
      if (a.has_g() && !expandGraph(*a.mutable_g()))
        return false;
      for (auto &g : *a.mutable_graphs())
        if (!expandGraph(g))
          return false;
    }
    return true;
  }

  bool expandGraph(onnx::GraphProto &g) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    for (const auto &node : g.node())
      if (!expand(node, out))
        return false;
    g.mutable_node()->Swap(&out);
    return true;
  }
};

} // namespace

bool wsc::inlineLocalFunctions(onnx::ModelProto &model, std::string &error) {
  if (model.functions_size() == 0)
    return true;
  Inliner inliner{{}, Inliner::defaultDomainVersion(model.opset_import()), 0, 0, error, {},
                  nullptr};
  for (const auto &f : model.functions()) {
    Function function{&f, Inliner::defaults(f)};
    if (!inliner.functions.try_emplace(key(f.domain(), f.name()), function).second) {
      error = "local function '" + f.domain() + "." + f.name() + "' is defined twice";
      return false;
    }
  }
  if (!inliner.expandGraph(*model.mutable_graph()))
    return false;
  model.clear_functions();
  return true;
}
