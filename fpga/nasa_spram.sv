// Main memory of the iCEBreaker board: 128 KB as 32K words of 32 bits with byte enables, one
// access per cycle, read data the cycle after. Synthesis: the UP5K's four SB_SPRAM256KA (two
// side by side for 32 bits, two banks deep); simulation: an array.
module nasa_spram (
  input  logic        clk_i,
  input  logic        en_i,
  input  logic        we_i,
  input  logic [14:0] addr_i,  // word address
  input  logic [31:0] wdata_i,
  input  logic [3:0]  wstrb_i,
  output logic [31:0] rdata_o
);
`ifdef SYNTHESIS
  logic [31:0] rd [2];
  logic bank_q;
  always_ff @(posedge clk_i) if (en_i && !we_i) bank_q <= addr_i[14];
  for (genvar b = 0; b < 2; b++) begin : g_bank
    for (genvar h = 0; h < 2; h++) begin : g_half
      SB_SPRAM256KA u_spram (
        .ADDRESS   (addr_i[13:0]),
        .DATAIN    (wdata_i[16*h +: 16]),
        .MASKWREN  ({wstrb_i[2*h+1], wstrb_i[2*h+1], wstrb_i[2*h], wstrb_i[2*h]}),
        .WREN      (we_i),
        .CHIPSELECT(en_i && (addr_i[14] == 1'(b))),
        .CLOCK     (clk_i),
        .STANDBY   (1'b0),
        .SLEEP     (1'b0),
        .POWEROFF  (1'b1),
        .DATAOUT   (rd[b][16*h +: 16])
      );
    end
  end
  assign rdata_o = rd[bank_q];
`else
  logic [31:0] mem [32768];
  logic [31:0] rdata_q;
  always_ff @(posedge clk_i) begin
    if (en_i) begin
      if (we_i) begin
        for (int i = 0; i < 4; i++) begin
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
