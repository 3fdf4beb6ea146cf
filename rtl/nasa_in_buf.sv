// Input activation buffer: NumPorts read ports at independent byte addresses, one MemBytes-wide
// write port. Built from NumPorts identical replicas (each maps to block RAM), written together,
// so every lane of the PE array / vector unit reads its own address each cycle. A port returns
// Width consecutive bytes from its address (byte 0 is the addressed byte): each replica keeps its
// even and odd words in two banks, so the two words a Width-byte read may span come out in one
// cycle. Read latency is one cycle.
module nasa_in_buf #(
  parameter int unsigned Bytes    = 65536,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned NumPorts = 16,
  parameter int unsigned Width    = 1,    // bytes per read, at most MemBytes
  localparam int unsigned AW      = $clog2(Bytes)
) (
  input  logic                       clk_i,
  input  logic                       we_i,
  input  logic [AW-1:0]              waddr_i,  // byte address, MemBytes aligned
  input  logic [MemBytes*8-1:0]      wdata_i,
  input  logic [NumPorts*AW-1:0]     raddr_i,  // byte addresses
  output logic [NumPorts*Width*8-1:0] rdata_o
);
  localparam int unsigned Words = Bytes / MemBytes;
  localparam int unsigned OffW  = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned WW    = (Words > 1) ? $clog2(Words) : 1;
  localparam int unsigned BW    = (WW > 1) ? WW - 1 : 1;  // word index within a bank
  localparam int unsigned RB    = Width * 8;

  // writes are whole words: the byte offset bits of the write address are zero
  logic unused_waddr;
  assign unused_waddr = ^waddr_i[OffW-1:0];

  logic [WW-1:0] wword;
  assign wword = waddr_i[AW-1 -: WW];

  for (genvar p = 0; p < NumPorts; p++) begin : g_port
    logic [MemBytes*8-1:0] even_q [Words / 2];
    logic [MemBytes*8-1:0] odd_q [Words / 2];
    logic [MemBytes*8-1:0] ew_q, ow_q;
    logic [OffW-1:0] sel_q;
    logic odd_lo_q;
    logic [AW-1:0] ra;
    logic [WW-1:0] rw, rw1;
    logic [2*MemBytes*8-1:0] win;
    assign ra  = raddr_i[p*AW +: AW];
    assign rw  = ra[AW-1 -: WW];
    assign rw1 = rw + WW'(1);  // the next word (wraps at the end: its bytes are then unused)

    always_ff @(posedge clk_i) begin
      if (we_i && !wword[0]) even_q[BW'(wword >> 1)] <= wdata_i;
      if (we_i && wword[0]) odd_q[BW'(wword >> 1)] <= wdata_i;
      ew_q     <= even_q[BW'(rw[0] ? (rw1 >> 1) : (rw >> 1))];
      ow_q     <= odd_q[BW'(rw >> 1)];
      odd_lo_q <= rw[0];
      sel_q    <= (MemBytes > 1) ? ra[OffW-1:0] : '0;
    end
    // the addressed word, then the next one
    assign win = odd_lo_q ? {ew_q, ow_q} : {ow_q, ew_q};
    assign rdata_o[p*RB +: RB] = RB'(win >> {sel_q, 3'b000});
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Writes are whole port words.
  if (MemBytes > 1) begin : g_chk_align
    assert property (@(posedge clk_i) we_i |-> (waddr_i[OffW-1:0] == '0))
      else $error("nasa_in_buf: unaligned write at %h", waddr_i);
  end
  assert property (@(posedge clk_i) !$isunknown(we_i))
    else $error("nasa_in_buf: X on we_i");
`endif
endmodule
