// Vector unit: Lanes per-channel lanes for one output pixel at a time. Each enabled cycle is one
// tap of the window: sum (average pool, global average pool), max (max pool; taps outside the
// image are ignored) or residual add (tap 0: requant(a, M, S), tap 1: + requant(b, Mb, Sb)).
// (Depthwise convolutions run on the PE array.) On the last tap the lane results move to a shadow register that
// the output path drains while the next pixel accumulates.
module nasa_vec_unit #(
  parameter int unsigned Lanes = 16
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  en_i,
  input  logic [1:0]            mode_i,    // nasa_pkg::vec_mode_e (0 unused)
  input  logic                  first_i,
  input  logic                  last_i,
  input  logic [Lanes-1:0]      valid_i,   // tap inside the image (max pool)
  input  logic [Lanes*8-1:0]    x_i,       // zero where the tap is outside the image
  input  logic [15:0]           m_i,
  input  logic [7:0]            s_i,
  input  logic [15:0]           mb_i,
  input  logic [7:0]            sb_i,
  output logic [Lanes*32-1:0]   res_o
);
  // (the contract's vector-unit modes, nasa_pkg::vec_mode_e)
  localparam logic [1:0] ModeSum = 2'(nasa_pkg::VecSum), ModeMax = 2'(nasa_pkg::VecMax),
                         ModeAdd = 2'(nasa_pkg::VecAdd);

  logic [15:0] am;
  logic [7:0] as;
  // tap 0 of an add uses (M, S), tap 1 (Mb, Sb)
  assign am = first_i ? m_i : mb_i;
  assign as = first_i ? s_i : sb_i;

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic [31:0] acc_q, res_q, nxt, base;
    logic signed [7:0] x;
    logic [31:0] rq;
    assign x  = $signed(x_i[l*8 +: 8]);
    assign rq = nasa_engine_pkg::rq8(x_i[l*8 +: 8], am, as);

    always_comb begin
      unique case (mode_i)
        ModeSum: begin
          base = first_i ? 32'd0 : acc_q;
          nxt  = base + 32'(x);
        end
        ModeMax: begin
          base = first_i ? 32'hFFFF_FF80 : acc_q;  // -128 is below or equal to every int8
          nxt  = (valid_i[l] && $signed(32'(x)) > $signed(base)) ? 32'(x) : base;
        end
        ModeAdd: begin
          base = first_i ? 32'd0 : acc_q;
          nxt  = base + rq;
        end
        default: begin
          base = acc_q;
          nxt  = acc_q;
        end
      endcase
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) acc_q <= '0;
      else if (en_i) acc_q <= nxt;
    end
    always_ff @(posedge clk_i) begin
      if (en_i && last_i) res_q <= nxt;
    end
    assign res_o[l*32 +: 32] = res_q;
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // An enabled tap has a mode (0 is unused), and a residual add has exactly two taps.
  assert property (@(posedge clk_i) disable iff (!rst_ni) en_i |-> (mode_i != 2'd0))
    else $error("nasa_vec_unit: tap with mode 0");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (en_i && mode_i == ModeAdd) |-> (first_i != last_i))
    else $error("nasa_vec_unit: add tap that is neither only the first nor only the last");
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({en_i, first_i, last_i}))
    else $error("nasa_vec_unit: X on a control input");
`endif
endmodule
