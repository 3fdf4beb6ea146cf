// Input activation buffer: NumPorts byte-wide read ports at independent addresses, one
// MemBytes-wide write port. Built from NumPorts identical single-read-port memories (each maps to
// block RAM), written together, so every lane of the PE array / vector unit reads its own byte
// each cycle. Read latency is one cycle.
module nasa_in_buf #(
  parameter int unsigned Bytes    = 65536,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned NumPorts = 16,
  localparam int unsigned AW      = $clog2(Bytes)
) (
  input  logic                       clk_i,
  input  logic                       we_i,
  input  logic [AW-1:0]              waddr_i,  // byte address, MemBytes aligned
  input  logic [MemBytes*8-1:0]      wdata_i,
  input  logic [NumPorts*AW-1:0]     raddr_i,  // byte addresses
  output logic [NumPorts*8-1:0]      rdata_o
);
  localparam int unsigned Words = Bytes / MemBytes;
  localparam int unsigned OffW  = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned WW    = (Words > 1) ? $clog2(Words) : 1;

  // writes are whole words: the byte offset bits of the write address are zero
  logic unused_waddr;
  assign unused_waddr = ^waddr_i[OffW-1:0];

  for (genvar p = 0; p < NumPorts; p++) begin : g_port
    logic [MemBytes*8-1:0] mem_q [Words];
    logic [MemBytes*8-1:0] word_q;
    logic [OffW-1:0] sel_q;
    logic [AW-1:0] ra;
    assign ra = raddr_i[p*AW +: AW];

    always_ff @(posedge clk_i) begin
      if (we_i) mem_q[waddr_i[AW-1 -: WW]] <= wdata_i;
      word_q <= mem_q[ra[AW-1 -: WW]];
      sel_q  <= (MemBytes > 1) ? ra[OffW-1:0] : '0;
    end
    assign rdata_o[p*8 +: 8] = word_q[{sel_q, 3'b000} +: 8];
  end
endmodule
