// Weight buffer: a ring of Depth bytes in each of Cols banks, one bank per output-channel lane.
// The tile loader places channel tiles one after another in the ring (docs/engine.md "Weight
// ring"), so the DMA fills the next tiles while the PE array reads the current one. A row write
// fills one bank word (conv/fc rows of k*k*Cin bytes); a scatter write puts byte l of the data
// into byte position `waddr_i` of bank l (depthwise taps, one byte per channel); a dealt row write
// (ks_i = log2 f > 0, a K-split tile's rows) puts data bytes i with i % f == g, in order, into
// the MemBytes/f bytes at `waddr_i` of bank g * Cols/f + `wbank_i`, for each group g < f. Read:
// every bank at the same byte address, one-cycle latency.
module nasa_wbuf #(
  parameter int unsigned Cols     = 16,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned Depth    = 16384,  // bytes per bank: a power of two, >= MemBytes
  localparam int unsigned AW      = $clog2(Depth),
  localparam int unsigned BankW   = (Cols > 1) ? $clog2(Cols) : 1
) (
  input  logic                  clk_i,
  input  logic                  we_i,
  input  logic                  scatter_i,
  input  logic [1:0]            ks_i,      // row writes: dealt over 2^ks_i bank groups
  input  logic [BankW-1:0]      wbank_i,
  input  logic [AW-1:0]         waddr_i,   // byte address (row writes: MemBytes aligned)
  input  logic [MemBytes*8-1:0] wdata_i,
  input  logic [AW-1:0]         raddr_i,
  output logic [Cols*8-1:0]     rdata_o
);
  localparam int unsigned Words = Depth / MemBytes;
  localparam int unsigned OffW  = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned WW    = (Words > 1) ? $clog2(Words) : 1;
  // dealt writes over 2 / 4 bank groups exist where f divides Cols and the port
  localparam bit Deal2 = Cols >= 2 && MemBytes >= 2;
  localparam bit Deal4 = Cols >= 4 && MemBytes >= 4;

  logic [WW-1:0] wword, rword;
  logic [OffW-1:0] wbyte;
  assign wword = waddr_i[AW-1 -: WW];
  assign rword = raddr_i[AW-1 -: WW];
  assign wbyte = (MemBytes > 1) ? waddr_i[OffW-1:0] : '0;

  for (genvar b = 0; b < Cols; b++) begin : g_bank
    logic [MemBytes*8-1:0] mem_q [Words];
    logic [MemBytes*8-1:0] word_q, wd;
    logic [MemBytes-1:0] strb;
    logic [OffW-1:0] sel_q;
    logic wen;
    // dealt writes: bank b is row b mod (Cols/f) of group g = b / (Cols/f), which takes the data
    // bytes i * f + g (i < MemBytes/f), repeated over the word
    logic [MemBytes*8-1:0] wd2, wd4;
    for (genvar i = 0; i < MemBytes; i++) begin : g_deal
      if (Deal2) begin : g_2
        assign wd2[i*8 +: 8] = wdata_i[((i % (MemBytes / 2)) * 2 + b / (Cols / 2))*8 +: 8];
      end else begin : g_2n
        assign wd2[i*8 +: 8] = 8'd0;
      end
      if (Deal4) begin : g_4
        assign wd4[i*8 +: 8] = wdata_i[((i % (MemBytes / 4)) * 4 + b / (Cols / 4))*8 +: 8];
      end else begin : g_4n
        assign wd4[i*8 +: 8] = 8'd0;
      end
    end

    always_comb begin
      wd   = wdata_i;
      strb = '1;
      wen  = we_i && (wbank_i == BankW'(b));
      if (!scatter_i && ks_i == 2'd1 && Deal2) begin
        wen = we_i && (32'(wbank_i) == b % (Cols / 2));
        wd  = wd2;
        strb = MemBytes'((64'(1) << (MemBytes / 2)) - 64'd1) << wbyte;
      end else if (!scatter_i && ks_i == 2'd2 && Deal4) begin
        wen = we_i && (32'(wbank_i) == b % (Cols / 4));
        wd  = wd4;
        strb = MemBytes'((64'(1) << (MemBytes / 4)) - 64'd1) << wbyte;
      end else if (scatter_i) begin
        wd   = {MemBytes{wdata_i[b*8 +: 8]}};
        strb = MemBytes'(1) << wbyte;
        wen  = we_i;
      end
    end

    always_ff @(posedge clk_i) begin
      for (int i = 0; i < MemBytes; i++) begin
        if (wen && strb[i]) mem_q[wword][i*8 +: 8] <= wd[i*8 +: 8];
      end
      word_q <= mem_q[rword];
      sel_q  <= (MemBytes > 1) ? raddr_i[OffW-1:0] : '0;
    end
    assign rdata_o[b*8 +: 8] = word_q[{sel_q, 3'b000} +: 8];
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // A row write fills one whole word of an existing bank.
  if (MemBytes > 1) begin : g_chk_align
    assert property (@(posedge clk_i) (we_i && !scatter_i) |->
                     (32'(waddr_i[OffW-1:0]) % (MemBytes >> ks_i) == 0))
      else $error("nasa_wbuf: unaligned row write at %h", waddr_i);
  end
  // a dealt write: f divides the port and the row is one of Cols/f
  assert property (@(posedge clk_i) (we_i && !scatter_i && ks_i != 2'd0) |->
                   ((1 << ks_i) <= MemBytes && (1 << ks_i) <= Cols &&
                    32'(wbank_i) < Cols >> ks_i))
    else $error("nasa_wbuf: dealt row write of row %0d over %0d groups", wbank_i, 1 << ks_i);
  assert property (@(posedge clk_i) (we_i && !scatter_i) |-> (32'(wbank_i) < Cols))
    else $error("nasa_wbuf: row write to bank %0d of %0d", wbank_i, Cols);
  assert property (@(posedge clk_i) !$isunknown({we_i, scatter_i}))
    else $error("nasa_wbuf: X on a write control");
`endif
endmodule
