// Main memory of the iCEBreaker board: 128 KB as 16K rows of 64 bits with byte enables, one
// access per cycle, read data the cycle after. Synthesis: the UP5K's four SB_SPRAM256KA side by
// side on one address (16 bits each); simulation: an array.
module nasa_spram (
  input  logic        clk_i,
  input  logic        en_i,
  input  logic        we_i,
  input  logic [13:0] addr_i,  // row address
  input  logic [63:0] wdata_i,
  input  logic [7:0]  wstrb_i,
  output logic [63:0] rdata_o
);
`ifdef SYNTHESIS
  for (genvar h = 0; h < 4; h++) begin : g_quarter
    SB_SPRAM256KA u_spram (
      .ADDRESS   (addr_i),
      .DATAIN    (wdata_i[16*h +: 16]),
      .MASKWREN  ({wstrb_i[2*h+1], wstrb_i[2*h+1], wstrb_i[2*h], wstrb_i[2*h]}),
      .WREN      (we_i),
      .CHIPSELECT(en_i),
      .CLOCK     (clk_i),
      .STANDBY   (1'b0),
      .SLEEP     (1'b0),
      .POWEROFF  (1'b1),
      .DATAOUT   (rdata_o[16*h +: 16])
    );
  end
`else
  logic [63:0] mem [16384];
  logic [63:0] rdata_q;
  always_ff @(posedge clk_i) begin
    if (en_i) begin
      if (we_i) begin
        for (int i = 0; i < 8; i++) begin
          if (wstrb_i[i]) mem[addr_i][8*i +: 8] <= wdata_i[8*i +: 8];
        end
      end else begin
        rdata_q <= mem[addr_i];
      end
    end
  end
  assign rdata_o = rdata_q;
`endif
endmodule
