// One requantization lane (DESIGN.md section 4): y = clamp(sat8(((v + bias) * M + 2^(S-1)) >>> S))
// in requant mode, or y = clamp(sat8(v)) in bypass mode (max pool, residual add). Combinational.
// S is in [1, MaxShift = 47] whenever the result is used (the engine validates descriptor and
// per-channel shifts before any data reaches a lane), so only its low 6 bits drive the shifters.
module nasa_requant (
  input  logic        bypass_i,
  input  logic [31:0] val_i,
  input  logic [31:0] bias_i,
  input  logic [15:0] m_i,
  input  logic [7:0]  s_i,
  input  logic [1:0]  act_i,     // 0 none, 1 relu, 2 relu6 (nasa_pkg::act_e)
  input  logic [7:0]  q6_i,
  output logic [7:0]  y_o
);
  logic [31:0] sum;
  logic signed [48:0] prod, rnd, shifted;
  logic signed [48:0] v;
  logic signed [8:0] lo, hi;
  logic [5:0] s6;
  logic unused_s;
  assign s6       = s_i[5:0];
  assign unused_s = ^s_i[7:6];

  assign sum  = val_i + bias_i;
  assign prod = $signed({{17{sum[31]}}, sum}) * $signed({33'd0, m_i});
  assign rnd  = (s6 == 6'd0) ? 49'sd0 : (49'sd1 <<< (s6 - 6'd1));
  assign shifted = (prod + rnd) >>> s6;
  assign v = bypass_i ? $signed({{17{val_i[31]}}, val_i}) : shifted;

  always_comb begin
    lo = -9'sd128;
    hi = 9'sd127;
    if (act_i == 2'(nasa_pkg::ActRelu)) lo = 9'sd0;
    if (act_i == 2'(nasa_pkg::ActRelu6)) begin
      lo = 9'sd0;
      hi = $signed({1'b0, q6_i});
    end
    if (v < 49'(lo)) y_o = lo[7:0];
    else if (v > 49'(hi)) y_o = hi[7:0];
    else y_o = v[7:0];
  end
endmodule
