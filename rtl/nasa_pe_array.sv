// Output-stationary PE array: Rows output positions x Cols output channels. Each enabled cycle
// PE(r,c) accumulates x[r][c]*w[c] (int8 x int8 -> int32, wrapping): Conv/Fc feed every column
// of row r the same input byte, depthwise convolutions each channel its own. On the last reduction step the
// final sums move to a shadow bank, so the next tile accumulates while the shadow is drained one
// row (output position) at a time, or two (rd_row2_i: the dual drain, docs/engine.md "Dual
// drain").
module nasa_pe_array #(
  parameter int unsigned Rows = 16,
  parameter int unsigned Cols = 16,
  localparam int unsigned RowW = (Rows > 1) ? $clog2(Rows) : 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 en_i,
  input  logic                 first_i,   // first reduction step of a tile: restart the sums
  input  logic                 last_i,    // last step: final sums to the shadow bank
  input  logic [Rows*Cols*8-1:0] x_i,  // x[r][c] at (r*Cols + c)*8
  input  logic [Cols*8-1:0]    w_i,
  input  logic [RowW-1:0]      rd_row_i,
  output logic [Cols*32-1:0]   rd_data_o,
  input  logic [RowW-1:0]      rd_row2_i,
  output logic [Cols*32-1:0]   rd_data2_o
);
  logic [31:0] acc_q [Rows][Cols];
  logic [31:0] shadow_q [Rows][Cols];

  for (genvar r = 0; r < Rows; r++) begin : g_row
    for (genvar c = 0; c < Cols; c++) begin : g_col
      logic signed [15:0] prod;
      logic [31:0] sum;
      assign prod = $signed(x_i[(r*Cols+c)*8 +: 8]) * $signed(w_i[c*8 +: 8]);
      assign sum  = (first_i ? 32'd0 : acc_q[r][c]) + 32'(prod);
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          acc_q[r][c] <= '0;
        end else if (en_i) begin
          acc_q[r][c] <= sum;
        end
      end
      always_ff @(posedge clk_i) begin
        if (en_i && last_i) shadow_q[r][c] <= sum;
      end
    end
  end

  always_comb begin
    for (int c = 0; c < Cols; c++) rd_data_o[c*32 +: 32] = shadow_q[rd_row_i][c];
    for (int c = 0; c < Cols; c++) rd_data2_o[c*32 +: 32] = shadow_q[rd_row2_i][c];
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(rd_row_i) < Rows)
    else $error("nasa_pe_array: read of row %0d of %0d", rd_row_i, Rows);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({en_i, first_i, last_i}))
    else $error("nasa_pe_array: X on a control input");
`endif
endmodule
