// Register macros of the RTL (docs/engine.md "RTL style"). A unit keeps its state in one packed
// struct q (typed FSM states of a package outside it, a Yosys 0.23 limit) and computes the next
// value d in one always_comb; NASA_FF(Q, D, RST) is its register: Q takes D every rising edge of
// clk_i and RST while rst_ni is low (asynchronous reset).
`ifndef NASA_REGS_SVH
`define NASA_REGS_SVH
`define NASA_FF(Q, D, RST) \
  always_ff @(posedge clk_i or negedge rst_ni) begin \
    if (!rst_ni) Q <= RST; \
    else Q <= D; \
  end
`endif
