// One requant lane of the drain (docs/engine.md "Micro-architecture"): a drained row's value of
// one channel, requantized by the tile's mode (nasa_engine_pkg: RqChan takes bias, M and S from
// the channel's per-channel record; otherwise the descriptor's M and S without bias; RqBypass
// saturates the value as it is) and clamped by `act_i`. The drain's first row lanes and the dual
// drain's second row lanes are these. Combinational.
module nasa_drain_lane (
  input  logic [1:0]  rq_i,   // the tile's requant mode (nasa_engine_pkg::Rq*)
  input  logic [31:0] val_i,
  input  logic [63:0] rec_i,  // the channel's record: bias [31:0], M [47:32], S [55:48]
  input  logic [15:0] m_i,    // the descriptor's M and S
  input  logic [7:0]  s_i,
  input  logic [1:0]  act_i,
  input  logic [7:0]  q6_i,
  output logic [7:0]  y_o
);
  logic chan;
  logic unused_rec;
  assign chan       = rq_i == nasa_engine_pkg::RqChan;
  assign unused_rec = ^rec_i[63:56];  // reserved byte of the record
  nasa_requant u_rq (
    .bypass_i(rq_i == nasa_engine_pkg::RqBypass),
    .val_i   (val_i),
    .bias_i  (chan ? rec_i[31:0] : 32'd0),
    .m_i     (chan ? rec_i[47:32] : m_i),
    .s_i     (chan ? rec_i[55:48] : s_i),
    .act_i   (act_i),
    .q6_i    (q6_i),
    .y_o     (y_o)
  );
endmodule
