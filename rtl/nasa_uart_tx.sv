// UART transmitter, 8N1: takes a byte on valid && ready and shifts out start bit, 8 data bits
// (LSB first) and stop bit, ClksPerBit clocks each; the line idles high.
module nasa_uart_tx #(
  parameter int unsigned ClksPerBit = 12
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       valid_i,
  output logic       ready_o,
  input  logic [7:0] data_i,
  output logic       tx_o
);
  localparam int unsigned CW = $clog2(ClksPerBit + 1);
  logic [9:0] sh_q;  // stop, data[7:0], start: shifted out LSB first
  logic [3:0] left_q;
  logic [CW-1:0] cnt_q;

  assign ready_o = (left_q == '0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sh_q   <= '1;
      left_q <= '0;
      cnt_q  <= '0;
      tx_o   <= 1'b1;
    end else if (left_q == '0) begin
      tx_o <= 1'b1;
      if (valid_i) begin
        sh_q   <= {1'b1, data_i, 1'b0};
        left_q <= 4'd10;
        cnt_q  <= CW'(ClksPerBit - 1);
        tx_o   <= 1'b0;  // the start bit begins now
      end
    end else if (cnt_q != '0) begin
      cnt_q <= cnt_q - CW'(1);
    end else begin
      sh_q   <= {1'b1, sh_q[9:1]};
      left_q <= left_q - 4'd1;
      cnt_q  <= CW'(ClksPerBit - 1);
      tx_o   <= (left_q == 4'd1) ? 1'b1 : sh_q[1];
    end
  end

  logic unused_sh;
  assign unused_sh = sh_q[0];  // the start bit, already on the line when it was loaded

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // The sender's side of valid/ready: a byte offered while a frame is on the line is held.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (valid_i && !ready_o) |=> (valid_i && $stable(data_i)))
    else $error("nasa_uart_tx: byte changed or withdrawn while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni) left_q <= 4'd10)
    else $error("nasa_uart_tx: %0d bits left of a 10-bit frame", left_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown(valid_i))
    else $error("nasa_uart_tx: X on valid_i");
`endif
endmodule
