// UART receiver, 8N1: samples the (synchronized) line in the middle of each bit. A start bit
// that is gone at its middle is a glitch and ignored; a missing stop bit drops the byte (the
// frame CRC catches what a lost byte leaves behind) and the next start bit is the next falling
// edge. ClksPerBit = clock / baud (>= 4).
module nasa_uart_rx #(
  parameter int unsigned ClksPerBit = 12
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       rx_i,
  output logic       valid_o,  // pulse: data_o holds a received byte
  output logic [7:0] data_o
);
  localparam int unsigned CW = $clog2(ClksPerBit + 1);
  typedef enum logic [1:0] {RIdle, RStart, RData, RStop} rstate_e;

  rstate_e st_q, st_d;
  logic [2:0] sync_q;  // two flops against metastability, a third for the falling edge
  logic [CW-1:0] cnt_q;
  logic [2:0] bit_q;
  logic [7:0] sh_q;
  logic line;
  assign line = sync_q[1];

  // next state
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      RIdle: begin
        // a start bit is a falling edge: a line held low (a break, a bad stop bit) is not
        if (!line && sync_q[2]) st_d = RStart;
      end
      RStart: begin
        // at the bit's middle: a start bit that is gone is a glitch
        if (cnt_q == '0) st_d = line ? RIdle : RData;
      end
      RData: begin
        if ((cnt_q == '0) && (bit_q == 3'd7)) st_d = RStop;
      end
      RStop: begin
        if (cnt_q == '0) st_d = RIdle;
      end
      default: st_d = RIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sync_q  <= 3'b111;
      st_q    <= RIdle;
      cnt_q   <= '0;
      bit_q   <= '0;
      sh_q    <= '0;
      valid_o <= 1'b0;
      data_o  <= '0;
    end else begin
      sync_q  <= {sync_q[1:0], rx_i};
      valid_o <= 1'b0;
      st_q    <= st_d;
      unique case (st_q)
        RIdle: begin
          if (!line && sync_q[2]) begin
            cnt_q <= CW'(ClksPerBit / 2 - 2);  // the synchronizer already took 2 clocks
          end
        end
        RStart: begin
          if (cnt_q != '0) begin
            cnt_q <= cnt_q - CW'(1);
          end else if (!line) begin
            cnt_q <= CW'(ClksPerBit - 1);
            bit_q <= '0;
          end
        end
        RData: begin
          if (cnt_q != '0) begin
            cnt_q <= cnt_q - CW'(1);
          end else begin
            sh_q  <= {line, sh_q[7:1]};
            cnt_q <= CW'(ClksPerBit - 1);
            bit_q <= bit_q + 3'd1;
          end
        end
        RStop: begin
          if (cnt_q != '0) begin
            cnt_q <= cnt_q - CW'(1);
          end else if (line) begin
            valid_o <= 1'b1;
            data_o  <= sh_q;
          end
        end
        default: ;
      endcase
    end
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // A byte takes ten bit times: valid_o never pulses in two consecutive cycles.
  assert property (@(posedge clk_i) disable iff (!rst_ni) valid_o |=> !valid_o)
    else $error("nasa_uart_rx: valid_o in consecutive cycles");
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(cnt_q) < ClksPerBit)
    else $error("nasa_uart_rx: bit counter %0d out of range", cnt_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown(rx_i))
    else $error("nasa_uart_rx: X on rx_i");
`endif
endmodule
