// The register file RAM of the board's controller cores: Words x Width bits, one write port and
// one registered read port (an EBR), all zero at start (x0 is never written and reads 0). The
// cores never read what they write in the same cycle, so Yosys places no bypass after the RAM
// (no_rw_check).
module nasa_mcu_rf #(
  parameter int unsigned Words = 32,
  parameter int unsigned Width = 32,
  localparam int unsigned AW   = $clog2(Words)
) (
  input  logic             clk_i,
  input  logic             we_i,
  input  logic [AW-1:0]    waddr_i,
  input  logic [Width-1:0] wdata_i,
  input  logic [AW-1:0]    raddr_i,
  output logic [Width-1:0] rdata_o   // the word at last cycle's raddr_i
);
  (* no_rw_check *) logic [Width-1:0] mem_q [Words];
  initial begin
    for (int i = 0; i < Words; i++) mem_q[i] = '0;
  end
  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[waddr_i] <= wdata_i;
    rdata_o <= mem_q[raddr_i];
  end
endmodule
