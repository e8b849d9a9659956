#include "TestPrograms.h"

#include <cstring>

namespace wsc::runtime::test {

format::Program makeProgram(uint32_t w, uint32_t h, uint32_t colors, uint32_t wafers) {
  format::Program p;
  p.set_format_version(kFormatVersion);
  p.set_tokens(1);
  format::Arch *a = p.mutable_arch();
  a->set_name("unit");
  a->set_width(w);
  a->set_height(h);
  a->set_sram_bytes_per_pe(4096);
  a->set_colors(colors);
  a->set_clock_hz(1e9);
  a->set_hop_cycles(1);
  a->set_simd_fp32(4);
  a->set_fmac_per_cycle_fp32(4);
  a->set_transcendental_cycles(8);
  a->set_ext_mem_bytes_per_cycle(16);
  a->set_link_bytes_per_cycle(4);
  a->set_link_latency_cycles(10);
  for (uint32_t i = 0; i < wafers; ++i)
    p.add_wafers()->set_index(i);
  return p;
}

format::Region *addRegion(format::Program &p, const std::string &name, uint32_t x, uint32_t y,
                         uint32_t w, uint32_t h, uint32_t waferIndex) {
  format::Region *r = p.mutable_wafers(int(waferIndex))->add_regions();
  r->set_name(name);
  r->set_x(x);
  r->set_y(y);
  r->set_w(w);
  r->set_h(h);
  return r;
}

format::Affine aff(int64_t base, std::initializer_list<int64_t> stride, int64_t px, int64_t py) {
  format::Affine a;
  a.set_base(base);
  for (int64_t s : stride)
    a.add_stride(s);
  a.set_px(px);
  a.set_py(py);
  return a;
}

format::Instr ins(format::Op op, std::initializer_list<int64_t> addrs, int64_t n, int64_t m) {
  format::Instr i;
  i.set_op(op);
  for (int64_t a : addrs)
    i.add_addr()->set_base(a);
  i.mutable_n()->set_base(n);
  i.mutable_m()->set_base(m);
  return i;
}

format::Instr send(uint32_t color, int64_t addr, int64_t n) {
  format::Instr i = ins(format::SEND, {addr}, n);
  i.set_color(color);
  return i;
}

format::Instr recv(uint32_t color, int64_t addr, int64_t n, format::Op op) {
  format::Instr i = ins(op, {addr}, n);
  i.set_color(color);
  return i;
}

format::Instr loop(uint32_t count) {
  format::Instr i;
  i.set_op(format::LOOP);
  i.set_count(count);
  return i;
}

format::Instr end() {
  format::Instr i;
  i.set_op(format::END);
  return i;
}

format::Instr only(format::Instr i, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1) {
  format::PeRange *r = i.add_pred();
  r->set_x0(x0);
  r->set_x1(x1);
  r->set_y0(y0);
  r->set_y1(y1);
  return i;
}

void addRoute(format::Program &p, uint32_t x, uint32_t y, uint32_t color, format::Port in,
              std::initializer_list<format::Port> out, uint32_t waferIndex) {
  format::Route *r = p.mutable_wafers(int(waferIndex))->add_routes();
  r->set_x(x);
  r->set_y(y);
  r->set_color(color);
  r->set_in(in);
  uint32_t mask = 0;
  for (format::Port o : out)
    mask |= 1u << o;
  r->set_out_mask(mask);
}

void routeEast(format::Program &p, uint32_t y, uint32_t x0, uint32_t x1, uint32_t color) {
  addRoute(p, x0, y, color, format::RAMP, {format::EAST});
  for (uint32_t x = x0 + 1; x < x1; ++x)
    addRoute(p, x, y, color, format::WEST, {format::EAST});
  addRoute(p, x1, y, color, format::WEST, {format::RAMP});
}

void initFloats(format::Region *r, uint32_t px, uint32_t py, uint32_t offset,
                const std::vector<float> &v) {
  format::SramInit *init = r->add_init();
  init->set_px(px);
  init->set_py(py);
  init->set_offset(offset);
  std::string bytes(v.size() * 4, '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());
  init->set_data(bytes);
}

format::HostTensor *addTensor(format::Program &p, bool output, const std::string &name,
                             format::DType dtype, std::vector<int64_t> shape) {
  format::HostTensor *t = output ? p.add_outputs() : p.add_inputs();
  t->set_name(name);
  t->set_dtype(dtype);
  for (int64_t d : shape)
    t->add_shape(d);
  return t;
}

void addPiece(format::HostTensor *t, uint32_t x, uint32_t y, uint32_t offset, uint64_t tensorOffset,
              uint32_t count, uint32_t rows, uint64_t rowStride, uint32_t waferIndex) {
  format::Piece *pc = t->add_pieces();
  pc->set_wafer(waferIndex);
  pc->set_x(x);
  pc->set_y(y);
  pc->set_offset(offset);
  pc->set_tensor_offset(tensorOffset);
  pc->set_count(count);
  pc->set_rows(rows);
  pc->set_row_stride(rowStride);
}

RunResult runProgram(const format::Program &p, const std::map<std::string, HostArray> &inputs,
                     unsigned threads, bool trace, int64_t stopAfterToken,
                     RunOptions::Engine engine) {
  RunResult res;
  Expected<std::unique_ptr<Emulator>> e = Emulator::create(p);
  if (!e) {
    res.status = e.status();
    return res;
  }
  for (const auto &[name, value] : inputs)
    if (Status s = (*e)->setInput(name, value); !s) {
      res.status = s;
      return res;
    }
  RunOptions o;
  o.threads = threads;
  o.trace = trace;
  o.stopAfterToken = stopAfterToken;
  o.engine = engine;
  res.status = (*e)->run(o);
  if (!res.status)
    return res;
  res.report = (*e)->report();
  for (const format::HostTensor &t : p.outputs())
    res.outputs[t.name()] = *(*e)->output(t.name());
  return res;
}

format::Program twoWafersOverALink() {
  format::Program p = makeProgram(3, 1, 8, 2);
  *addRegion(p, "a", 0, 0, 1, 1, 0)->add_code() = send(2, 0, 4);
  *addRegion(p, "b", 1, 0, 1, 1, 1)->add_code() = recv(3, 0, 4);
  addRoute(p, 0, 0, 2, format::RAMP, {format::EAST}, 0);
  addRoute(p, 1, 0, 2, format::WEST, {format::EAST}, 0);
  addRoute(p, 2, 0, 2, format::WEST, {format::LINK}, 0);
  addRoute(p, 0, 0, 3, format::LINK, {format::EAST}, 1);
  addRoute(p, 1, 0, 3, format::WEST, {format::RAMP}, 1);
  format::InterWaferLink *l = p.add_links();
  l->set_src_wafer(0);
  l->set_src_x(2);
  l->set_color(2);
  l->set_dst_wafer(1);
  l->set_dst_x(0);
  l->set_dst_color(3);
  return p;
}

format::Program relay(bool lockstep, bool south) {
  constexpr uint32_t kWords = 8;
  format::Program p = south ? makeProgram(1, 2) : makeProgram(2, 1);
  uint32_t bx = south ? 0 : 1, by = south ? 1 : 0;
  format::Region *a = addRegion(p, "ids", 0, 0, 1, 1);
  format::Region *b = addRegion(p, "argmax", bx, by, 1, 1);
  *a->add_code() = loop(kWords);
  format::Instr plus = ins(format::ADD_I, {64, 0}, 1);
  *plus.mutable_addr(1) = aff(0, {4});
  plus.set_imm(1);
  plus.set_type(format::ELEM_I32);
  *a->add_code() = plus;
  *a->add_code() = send(1, 64, 1);
  if (lockstep)
    *a->add_code() = recv(2, 68, 1);
  *a->add_code() = end();
  *b->add_code() = loop(kWords);
  format::Instr take = recv(1, 0, 1);
  *take.mutable_addr(0) = aff(0, {4});
  *b->add_code() = take;
  if (lockstep)
    *b->add_code() = send(2, 64, 1);
  *b->add_code() = end();
  format::Port out = south ? format::SOUTH : format::EAST, in = south ? format::NORTH : format::WEST;
  addRoute(p, 0, 0, 1, format::RAMP, {out});
  addRoute(p, bx, by, 1, in, {format::RAMP});
  if (lockstep) {
    addRoute(p, bx, by, 2, format::RAMP, {in});
    addRoute(p, 0, 0, 2, out, {format::RAMP});
  }
  addPiece(addTensor(p, false, "ids", format::I64, {2, 4}), 0, 0, 0, 0, kWords);
  addPiece(addTensor(p, true, "next_token", format::I64, {2, 4}), bx, by, 0, 0, kWords);
  p.mutable_generation()->set_token_input("ids");
  p.mutable_generation()->set_next_token_output("next_token");
  p.mutable_generation()->set_context(4);
  return p;
}

} // namespace wsc::runtime::test
