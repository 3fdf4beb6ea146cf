// Where the byte range [addr, addr + len) lies relative to the on-chip scratch window [base,
// base + Bytes) (docs/engine.md "On-chip scratch", error Window: a layer's inputs and output lie
// wholly inside the window or wholly outside it; descriptors, weights and records outside).
// base is CSR ScratchBase (aligned; 0: no window); Bytes = 0: no scratch. Combinational; shared
// by the descriptor fetch (sequencer) and the region checks of decode.
module nasa_engine_sc_check #(
  parameter int unsigned Bytes = 0,
  parameter int unsigned LenW  = 34  // bits of len_i
) (
  input  logic [31:0]     addr_i,
  input  logic [LenW-1:0] len_i,
  input  logic [31:0]     base_i,
  output logic            overlap_o,  // a byte of the range in the window
  output logic            inside_o    // every byte of it
);
  localparam int unsigned EW = (LenW > 32) ? LenW + 1 : 33;
  logic [EW-1:0] lo, hi, a, e;
  assign lo = EW'(base_i);
  assign hi = EW'(base_i) + EW'(Bytes);
  assign a  = EW'(addr_i);
  assign e  = EW'(addr_i) + EW'(len_i);
  if (Bytes == 0) begin : g_none
    assign overlap_o = 1'b0;
    assign inside_o  = 1'b0;
    logic unused;
    assign unused = ^{lo, hi, a, e};
  end else begin : g_win
    logic on;
    assign on        = base_i != '0;
    assign overlap_o = on && len_i != '0 && a < hi && e > lo;
    assign inside_o  = on && a >= lo && e <= hi;
  end
endmodule
