// UART receiver, 8N1: samples the (synchronized) line in the middle of each bit. A start bit
// that is gone at its middle is a glitch and ignored; a missing stop bit drops the byte (the
// frame CRC catches what a lost byte leaves behind) and the next start bit is the next falling
// edge. ClksPerBit = clock / baud (>= 4).
`include "nasa_regs.svh"

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

  logic [2:0] sync_q;  // two flops against metastability, a third for the falling edge
  // registers (all zero after reset)
  typedef struct packed {
    rstate_e st;   // the FSM state (RIdle: 0)
    logic [CW-1:0] cnt;    // clocks to the middle of the next bit
    logic [2:0]    nbit;   // data bits received
    logic [7:0]    sh;
    logic          valid;  // valid_o
    logic [7:0]    data;   // data_o
  } regs_t;
  regs_t q, d;
  logic line;
  assign line    = sync_q[1];
  assign valid_o = q.valid;
  assign data_o  = q.data;

  // next state and registers: past the start, each state waits for the middle of its bit
  always_comb begin
    d       = q;
    d.valid = 1'b0;
    if (q.st != RIdle && q.cnt != '0) begin
      d.cnt = q.cnt - CW'(1);
    end else begin
      unique case (q.st)
        RIdle: begin
          // a start bit is a falling edge: a line held low (a break, a bad stop bit) is not
          if (!line && sync_q[2]) begin
            d.st  = RStart;
            d.cnt = CW'(ClksPerBit / 2 - 2);  // the synchronizer already took 2 clocks
          end
        end
        RStart: begin
          if (line) begin
            d.st = RIdle;  // a start bit that is gone at its middle is a glitch
          end else begin
            d.st   = RData;
            d.cnt  = CW'(ClksPerBit - 1);
            d.nbit = '0;
          end
        end
        RData: begin
          d.sh   = {line, q.sh[7:1]};
          d.cnt  = CW'(ClksPerBit - 1);
          d.nbit = q.nbit + 3'd1;
          if (q.nbit == 3'd7) d.st = RStop;
        end
        RStop: begin
          d.st = RIdle;
          if (line) begin
            d.valid = 1'b1;
            d.data  = q.sh;
          end
        end
        default: d.st = RIdle;
      endcase
    end
  end

  `NASA_FF(sync_q, {sync_q[1:0], rx_i}, 3'b111)
  `NASA_FF(q, d, '0)

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // A byte takes ten bit times: valid_o never pulses in two consecutive cycles.
  assert property (@(posedge clk_i) disable iff (!rst_ni) valid_o |=> !valid_o)
    else $error("nasa_uart_rx: valid_o in consecutive cycles");
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(q.cnt) < ClksPerBit)
    else $error("nasa_uart_rx: bit counter %0d out of range", q.cnt);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown(rx_i))
    else $error("nasa_uart_rx: X on rx_i");
`endif
endmodule
