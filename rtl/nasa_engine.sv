// NASA compute engine: fetches layer descriptors from memory, validates them, and runs each layer
// tile by tile. Conv/Fc run on the output-stationary PE array (Rows output positions x Cols output
// channels, reduction over k*k*Cin); depthwise, pools, residual add and global average pool run on
// the vector unit (Cols channel lanes, one output pixel at a time). The input tensor streams into
// the input buffer once per layer (compute starts as soon as the rows a tile needs have arrived);
// weights and per-channel parameters of the next channel tile load into the idle half of the
// double-buffered weight buffer while the current tile computes; finished tiles drain through the
// requant lanes and the output writer while the next tile accumulates. See docs/engine.md.
module nasa_engine #(
  parameter int unsigned Rows       = 16,
  parameter int unsigned Cols       = 16,
  parameter int unsigned MemBytes   = 32,
  parameter int unsigned InBufBytes = 65536,
  parameter int unsigned KredMax    = 8192,
  parameter int unsigned BurstMax   = 8,
  parameter int unsigned RqLanes    = Cols,  // requant lanes: a drained row takes Cols/RqLanes cycles at most
  parameter int unsigned AddrBits   = 32,    // address space [0, 2^AddrBits)
  parameter int unsigned DmaInflight = 16,   // DMA read jobs in flight (a power of two)
  parameter int unsigned WTiles     = 16     // channel tiles the weight ring holds (a power of two)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // CSR bus
  input  logic                  csr_valid_i,
  output logic                  csr_ready_o,
  input  logic                  csr_we_i,
  input  logic [11:0]           csr_addr_i,
  input  logic [31:0]           csr_wdata_i,
  output logic                  csr_rvalid_o,
  output logic [31:0]           csr_rdata_o,
  // memory port
  output logic                  mem_req_valid_o,
  input  logic                  mem_req_ready_i,
  output logic                  mem_req_we_o,
  output logic [31:0]           mem_req_addr_o,
  output logic [7:0]            mem_req_len_o,
  output logic [MemBytes*8-1:0] mem_req_wdata_o,
  output logic [MemBytes-1:0]   mem_req_wstrb_o,
  input  logic                  mem_rsp_valid_i,
  output logic                  mem_rsp_ready_o,
  input  logic [MemBytes*8-1:0] mem_rsp_rdata_i,
  // status
  output logic                  busy_o,
  output logic                  done_o,
  output logic                  error_o,
  output logic                  layer_end_o,  // pulse: a layer's last result is written
  // ext mode (batch runs, docs/fusion.md): descriptors come from the scheduler as a template
  // address plus the X/Y/L addresses its PATCH bits substitute
  output logic                  batch_start_o,  // pulse: a batch run started (engine waits in ext mode)
  input  logic                  xd_valid_i,
  output logic                  xd_ready_o,     // the template fetch was issued
  input  logic [31:0]           xd_tpl_i,
  input  logic [31:0]           xd_x_i,
  input  logic [31:0]           xd_y_i,
  input  logic [31:0]           xd_l_i,
  output logic                  xd_done_o,      // pulse: the descriptor completed
  input  logic                  xd_end_i,       // end the batch run with xd_err_i / xd_err_index_i
  input  logic [7:0]            xd_err_i,
  input  logic [31:0]           xd_err_index_i,
  output logic                  ext_wait_o,     // ext mode, waiting for a descriptor, DMA idle
  output logic [31:0]           win_base_o,
  output logic [31:0]           win_limit_o,
  // memory traffic of the control units (counted in DramRdBytes / DramWrBytes)
  input  logic                  ext_rd_beat_i,
  input  logic                  ext_wr_i
);
  localparam int unsigned NumIn = (Rows > Cols) ? Rows : Cols;
  localparam int unsigned IAW   = $clog2(InBufBytes);
  localparam int unsigned WAW   = $clog2(KredMax);
  localparam int unsigned RowW  = (Rows > 1) ? $clog2(Rows) : 1;
  localparam int unsigned ColW  = (Cols > 1) ? $clog2(Cols) : 1;
  localparam int unsigned OffW  = $clog2(MemBytes);
  localparam int unsigned NW    = $clog2(Cols + 1);
  // Weight ring (docs/engine.md "Weight ring"): 2*KredMax bytes per lane, holding up to WTiles
  // channel tiles; each tile's per-channel records sit in one of WTiles record slots (NPW port
  // words each). Ring pointers are PtrW bits: two more than a slot index, so their differences
  // (within +-WTiles) keep their sign.
  localparam int unsigned WDepth = 2 * KredMax;
  localparam int unsigned WRW   = $clog2(WDepth);
  localparam int unsigned TRW   = $clog2(WTiles);
  localparam int unsigned PtrW  = TRW + 2;
  localparam int unsigned NPW   = (Cols * 8 + MemBytes - 1) / MemBytes;
  // DMA tag = {base, bank[7:0], flag, dst[2:0]}; base: an input-buffer byte offset, a weight-ring
  // byte address or a record slot, so as wide as the larger buffer's addresses (and >= 6)
  localparam int unsigned BaseW = (IAW > WRW) ? ((IAW > 6) ? IAW : 6) : ((WRW > 6) ? WRW : 6);
  localparam int unsigned TagW  = BaseW + 12;
  localparam int unsigned Chunk = BurstMax * MemBytes;  // input chunk per read job
  localparam int unsigned WChunk = Chunk / 2;  // weight column: bytes of each row per job
  // the largest DMA job: a descriptor, an input chunk, or a tile's per-channel records
  localparam int unsigned MaxJob = (Chunk > Cols * 8) ? ((Chunk > 64) ? Chunk : 64) :
                                   ((Cols * 8 > 64) ? Cols * 8 : 64);
  localparam int unsigned NC    = nasa_pkg::NumCounters;
  // Memory addresses past validation: every region lies inside the window, which the CSRs clamp
  // to [0, 2^AddrBits), so AW bits hold them.
  localparam int unsigned AW    = AddrBits;
  // Decode products saturate at 2^DW - 1: above every bound they are checked against (the input
  // buffer, KredMax, a window region's 2^(AW+1) length limit), so each check gives the exact
  // product's verdict, and products of layers that pass validation are exact.
  localparam int unsigned DW0   = (AW + 2 > IAW + 2) ? AW + 2 : IAW + 2;
  localparam int unsigned DW    = (DW0 > KW + 1) ? DW0 : KW + 1;
  // Input-buffer offsets (signed): the lanes' window corners and rows, kernel offsets, the
  // watermark. A valid layer keeps them within (2*Rows + 16) * InBufBytes in magnitude (lanes
  // past the last position run at most Rows - 1 positions, i.e. 2*Rows input rows, further; a
  // kernel offset is at most 13 buffers), so OW bits hold them; the lanes' read addresses use
  // only the low IAW bits, where wrap-around does not matter.
  localparam int unsigned OW    = $clog2((2 * Rows + 16) * InBufBytes) + 1;
  localparam int unsigned CW    = 18;  // signed window-corner coordinates
  // Counter widths from what bounds them: a reduction step (ci < k*k*Cin <= KredMax), an output
  // position or position tile (<= H*W <= InBufBytes, plus a tile's lanes past the end), a
  // channel tile and channel offset (Cout < 2^16), weight-buffer jobs of one half (one record
  // job plus Cols rows per weight column, or k*k <= 49 taps)
  localparam int unsigned KW    = $clog2(KredMax + 1);
  localparam int unsigned PW    = $clog2(InBufBytes + Rows + 1) + 1;
  localparam int unsigned JW    = 17;
  localparam int unsigned CoW   = 17;
  localparam int unsigned HJW   = $clog2(2 + Cols * ((KredMax + WChunk - 1) / WChunk) + 49);

  localparam logic [2:0] DstDesc = 3'd0, DstIn = 3'd1, DstWRow = 3'd2, DstWScat = 3'd3,
                         DstPrm = 3'd4;
  localparam logic [1:0] RqChan = 2'd0, RqDesc = 2'd1, RqBypass = 2'd2;

  typedef enum logic [2:0] {
    StIdle, StFetch, StFetchWait, StDecode, StRun, StAbort
  } state_e;


  // ======================= CSRs =======================
  logic start, start_batch, finish, ext_q;
  logic [31:0] desc_addr, desc_count, win_base, win_limit;
  logic [7:0] err_q;
  logic [31:0] err_index_q, layers_done_q;
  logic [NC*16-1:0] cnt_inc;
  state_e state_q;

  nasa_csr #(
    .Rows      (Rows),
    .Cols      (Cols),
    .MemBytes  (MemBytes),
    .InBufBytes(InBufBytes),
    .KredMax   (KredMax),
    .BurstMax  (BurstMax),
    .AddrBits  (AddrBits)
  ) u_csr (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .csr_valid_i  (csr_valid_i),
    .csr_ready_o  (csr_ready_o),
    .csr_we_i     (csr_we_i),
    .csr_addr_i   (csr_addr_i),
    .csr_wdata_i  (csr_wdata_i),
    .csr_rvalid_o (csr_rvalid_o),
    .csr_rdata_o  (csr_rdata_o),
    .start_o      (start),
    .batch_o      (start_batch),
    .desc_addr_o  (desc_addr),
    .desc_count_o (desc_count),
    .win_base_o   (win_base),
    .win_limit_o  (win_limit),
    .busy_i       (busy_o),
    .finish_i     (finish),
    .err_code_i   (err_q),
    .err_index_i  (err_index_q),
    .layers_done_i(layers_done_q),
    .cnt_inc_i    (cnt_inc),
    .done_o       (done_o),
    .error_o      (error_o)
  );
  assign busy_o        = (state_q != StIdle);
  assign batch_start_o = start && start_batch;
  assign win_base_o    = win_base;
  assign win_limit_o   = win_limit;

  // ======================= DMA =======================
  logic dma_abort, dma_idle;
  logic job_valid, job_ready;
  logic [AW-1:0] job_src;
  logic [31:0] job_len;
  logic [TagW-1:0] job_tag;
  logic o_valid, o_last;
  logic [TagW-1:0] o_tag;
  logic [31:0] o_idx;
  logic [MemBytes*8-1:0] o_data;
  logic wr_valid, wr_ready;
  logic [AW-1:0] wr_addr;
  logic [MemBytes*8-1:0] wr_data;
  logic [MemBytes-1:0] wr_strb;
  logic ev_rd_beat, ev_wr;
  logic [OffW:0] ev_wr_bytes;

  nasa_dma #(
    .MemBytes(MemBytes),
    .BurstMax(BurstMax),
    .TagW    (TagW),
    .AddrBits(AW),
    .JobDepth(4),
    .Inflight(DmaInflight),
    .MaxJob  (MaxJob)
  ) u_dma (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (dma_abort),
    .idle_o         (dma_idle),
    .job_valid_i    (job_valid),
    .job_ready_o    (job_ready),
    .job_src_i      (job_src),
    .job_len_i      (job_len),
    .job_tag_i      (job_tag),
    .out_valid_o    (o_valid),
    .out_tag_o      (o_tag),
    .out_idx_o      (o_idx),
    .out_last_o     (o_last),
    .out_data_o     (o_data),
    .wr_valid_i     (wr_valid),
    .wr_ready_o     (wr_ready),
    .wr_addr_i      (wr_addr),
    .wr_data_i      (wr_data),
    .wr_strb_i      (wr_strb),
    .ev_rd_beat_o   (ev_rd_beat),
    .ev_wr_o        (ev_wr),
    .ev_wr_bytes_o  (ev_wr_bytes),
    .mem_req_valid_o(mem_req_valid_o),
    .mem_req_ready_i(mem_req_ready_i),
    .mem_req_we_o   (mem_req_we_o),
    .mem_req_addr_o (mem_req_addr_o),
    .mem_req_len_o  (mem_req_len_o),
    .mem_req_wdata_o(mem_req_wdata_o),
    .mem_req_wstrb_o(mem_req_wstrb_o),
    .mem_rsp_valid_i(mem_rsp_valid_i),
    .mem_rsp_ready_o(mem_rsp_ready_o),
    .mem_rsp_rdata_i(mem_rsp_rdata_i)
  );

  // DMA output routing
  logic [2:0] o_dst;
  logic o_flag;  // weights: the tile's last job
  logic [7:0] o_bank;
  logic [31:0] o_addr;
  assign o_dst  = o_tag[2:0];
  assign o_flag = o_tag[3];
  assign o_bank = o_tag[11:4];
  assign o_addr = 32'(o_tag[TagW-1:12]) + (o_idx << OffW);

  // ======================= descriptor register and fields =======================
  // In ext mode the first decode cycle substitutes the template's patched address fields.
  logic [511:0] desc_q;
  logic [31:0] xq_x, xq_y, xq_l;
  logic [7:0] f_patch;
  logic patch_now;
  assign f_patch   = desc_q[nasa_pkg::DescPatchWord*32 + nasa_pkg::DescPatchLsb +:
                            nasa_pkg::DescPatchWidth];
  assign patch_now = ext_q && (state_q == StDecode) && (dec_step_q == 4'd0);
  always_ff @(posedge clk_i) begin
    for (int b = 0; b < 64; b++) begin
      if (o_valid && o_dst == DstDesc && (32'(b) >> OffW) == o_idx) begin
        desc_q[b*8 +: 8] <= o_data[(b % MemBytes)*8 +: 8];
      end
    end
    if (patch_now) begin
      if (f_patch[nasa_pkg::PatchInFromXBit]) begin
        desc_q[nasa_pkg::DescInAddrWord*32 +: 32] <= xq_x;
      end
      if (f_patch[nasa_pkg::PatchIn2FromXBit]) begin
        desc_q[nasa_pkg::DescIn2AddrWord*32 +: 32] <= xq_x;
      end
      if (f_patch[nasa_pkg::PatchOutFromLBit]) begin
        desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <= xq_l;
      end else if (f_patch[nasa_pkg::PatchOutFromYBit]) begin
        desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <= xq_y;
      end
    end
  end

  logic [7:0] f_op, f_act, f_k, f_s, f_sq, f_q6, f_sb;
  logic [15:0] f_h, f_w, f_cin, f_cout, f_m, f_mb;
  logic [31:0] f_in, f_in2, f_out, f_wgt, f_prm;
  assign f_op   = desc_q[nasa_pkg::DescOpWord*32 + nasa_pkg::DescOpLsb +: nasa_pkg::DescOpWidth];
  assign f_act  = desc_q[nasa_pkg::DescActWord*32 + nasa_pkg::DescActLsb +: nasa_pkg::DescActWidth];
  assign f_k    = desc_q[nasa_pkg::DescKWord*32 + nasa_pkg::DescKLsb +: nasa_pkg::DescKWidth];
  assign f_s    = desc_q[nasa_pkg::DescStrideWord*32 + nasa_pkg::DescStrideLsb +:
                         nasa_pkg::DescStrideWidth];
  assign f_h    = desc_q[nasa_pkg::DescHWord*32 + nasa_pkg::DescHLsb +: nasa_pkg::DescHWidth];
  assign f_w    = desc_q[nasa_pkg::DescWWord*32 + nasa_pkg::DescWLsb +: nasa_pkg::DescWWidth];
  assign f_cin  = desc_q[nasa_pkg::DescCinWord*32 + nasa_pkg::DescCinLsb +: nasa_pkg::DescCinWidth];
  assign f_cout = desc_q[nasa_pkg::DescCoutWord*32 + nasa_pkg::DescCoutLsb +:
                         nasa_pkg::DescCoutWidth];
  assign f_in   = desc_q[nasa_pkg::DescInAddrWord*32 + nasa_pkg::DescInAddrLsb +:
                         nasa_pkg::DescInAddrWidth];
  assign f_in2  = desc_q[nasa_pkg::DescIn2AddrWord*32 + nasa_pkg::DescIn2AddrLsb +:
                         nasa_pkg::DescIn2AddrWidth];
  assign f_out  = desc_q[nasa_pkg::DescOutAddrWord*32 + nasa_pkg::DescOutAddrLsb +:
                         nasa_pkg::DescOutAddrWidth];
  assign f_wgt  = desc_q[nasa_pkg::DescWgtAddrWord*32 + nasa_pkg::DescWgtAddrLsb +:
                         nasa_pkg::DescWgtAddrWidth];
  assign f_prm  = desc_q[nasa_pkg::DescPrmAddrWord*32 + nasa_pkg::DescPrmAddrLsb +:
                         nasa_pkg::DescPrmAddrWidth];
  assign f_m    = desc_q[nasa_pkg::DescMWord*32 + nasa_pkg::DescMLsb +: nasa_pkg::DescMWidth];
  assign f_sq   = desc_q[nasa_pkg::DescSWord*32 + nasa_pkg::DescSLsb +: nasa_pkg::DescSWidth];
  assign f_q6   = desc_q[nasa_pkg::DescQ6Word*32 + nasa_pkg::DescQ6Lsb +: nasa_pkg::DescQ6Width];
  assign f_mb   = desc_q[nasa_pkg::DescMbWord*32 + nasa_pkg::DescMbLsb +: nasa_pkg::DescMbWidth];
  assign f_sb   = desc_q[nasa_pkg::DescSbWord*32 + nasa_pkg::DescSbLsb +: nasa_pkg::DescSbWidth];

  logic is_conv, is_dw, is_fc, is_max, is_avg, is_add, is_gap, is_pool, is_win;
  assign is_conv = (f_op == nasa_pkg::OpConv);
  assign is_dw   = (f_op == nasa_pkg::OpDwConv);
  assign is_fc   = (f_op == nasa_pkg::OpFc);
  assign is_max  = (f_op == nasa_pkg::OpMaxPool);
  assign is_avg  = (f_op == nasa_pkg::OpAvgPool);
  assign is_add  = (f_op == nasa_pkg::OpAdd);
  assign is_gap  = (f_op == nasa_pkg::OpGap);
  assign is_pool = is_max || is_avg;
  assign is_win  = is_conv || is_dw || is_pool;  // sliding-window ops with stride and padding

  logic [15:0] f_ho, f_wo, f_kk, f_pad, f_kwin;
  assign f_kwin = is_pool ? 16'd3 : {8'd0, f_k};
  assign f_ho   = (is_win && f_s == 8'd2) ? 16'((17'(f_h) + 17'd1) >> 1) : f_h;
  assign f_wo   = (is_win && f_s == 8'd2) ? 16'((17'(f_w) + 17'd1) >> 1) : f_w;
  assign f_kk   = f_k * f_k;
  assign f_pad  = is_win ? ((f_kwin - 16'd1) >> 1) : 16'd0;

  // ======================= decode: shared multiplier micro-sequence =======================
  logic [3:0] dec_step_q;
  // one DW x 17 saturating multiplier: every product has an operand of at most 17 bits (a
  // dimension, a channel count, a padding, or twice Cin) and one that is a dimension or an
  // earlier (saturated) product; sat(sat(a) * b) = sat(a * b)
  logic [DW-1:0] mul_a;
  logic [16:0] mul_b;
  logic [DW+16:0] mul_w;
  logic [DW-1:0] mul_p;
  logic [DW-1:0] d_hw_in, d_in_bytes, d_row_b, d_kred, d_hw_out, d_out_bytes, d_wgt_bytes;
  logic [OW-1:0] d_wrap, d_padrow, d_padcin;  // feed only the layer registers (valid layers)
  logic [16:0] f_scin;
  assign f_scin = (is_win && f_s == 8'd2) ? {f_cin, 1'b0} : {1'b0, f_cin};
  // Pixel gather (docs/engine.md "Input loader"): a 1x1 stride-2 Conv/DwConv whose used pixels,
  // each in a slot of Cin rounded up to the port width (f_cpad), take no more room than the
  // whole input runs as a stride-1 layer over that compact Ho x Wo x f_cpad input
  logic [16:0] f_cpad;
  logic g_cand, g_take;
  logic [DW-1:0] d_vbytes;
  assign f_cpad = (17'(f_cin) + 17'(MemBytes - 1)) & ~17'(MemBytes - 1);
  assign g_cand = (is_conv || is_dw) && f_k == 8'd1 && f_s == 8'd2;
  assign g_take = g_cand && (d_vbytes <= d_in_bytes);

  always_comb begin
    mul_a = '0;
    mul_b = '0;
    unique case (dec_step_q)
      4'd0: begin mul_a = DW'(f_h); mul_b = 17'(f_w); end
      4'd1: begin mul_a = d_hw_in; mul_b = 17'(f_cin); end
      4'd2: begin mul_a = DW'(f_w); mul_b = 17'(f_cin); end
      4'd3: begin mul_a = is_fc ? d_hw_in : DW'(f_kk); mul_b = 17'(f_cin); end
      4'd4: begin mul_a = DW'(f_ho); mul_b = 17'(f_wo); end
      4'd5: begin mul_a = (is_fc || is_gap) ? DW'(1) : d_hw_out; mul_b = 17'(f_cout); end
      4'd6: begin
        mul_a = is_dw ? DW'(f_kk) : d_kred;
        mul_b = is_dw ? 17'(f_cin) : 17'(f_cout);
      end
      4'd7: begin mul_a = DW'(f_wo) - DW'(1); mul_b = f_scin; end
      4'd8: begin mul_a = d_hw_out; mul_b = f_cpad; end   // gathered input bytes
      4'd9: begin mul_a = d_row_b; mul_b = 17'(f_pad); end
      4'd10: begin mul_a = DW'(f_pad); mul_b = 17'(f_cin); end
      4'd11: begin mul_a = DW'(f_wo); mul_b = f_cpad; end  // gathered row bytes (at ld_start)
      default: ;
    endcase
  end
  assign mul_w = (DW + 17)'(mul_a) * (DW + 17)'(mul_b);
  assign mul_p = (mul_w[DW+16:DW] != '0) ? '1 : mul_w[DW-1:0];

  always_ff @(posedge clk_i) begin
    if (state_q == StDecode) begin
      unique case (dec_step_q)
        4'd0: d_hw_in <= mul_p;
        4'd1: d_in_bytes <= mul_p;
        4'd2: d_row_b <= mul_p;
        4'd3: d_kred <= mul_p;
        4'd4: d_hw_out <= mul_p;
        4'd5: d_out_bytes <= mul_p;
        4'd6: d_wgt_bytes <= mul_p;
        4'd7: d_wrap <= OW'(mul_p);
        4'd8: d_vbytes <= mul_p;
        4'd9: d_padrow <= OW'(mul_p);
        4'd10: d_padcin <= OW'(mul_p);
        default: ;
      endcase
    end
  end

  // validation, in the order of docs/engine.md
  // [addr, addr + len) inside [base, limit), where base, limit <= 2^AW (CSR clamp): in AW + 2
  // bits once addr < 2^AW and len <= 2^(AW+1) are known
  logic [AW:0] win_base_a, win_limit_a;
  assign win_base_a  = (AW + 1)'(win_base);
  assign win_limit_a = (AW + 1)'(win_limit);
  function automatic logic in_win(input logic [31:0] addr, input logic [DW-1:0] len,
                                  input logic [AW:0] base, input logic [AW:0] limit);
    logic [AW+1:0] end_addr;
    end_addr = (AW + 2)'(addr) + (AW + 2)'(len);
    in_win = ((64'(addr) >> AW) == '0) && ((64'(len) >> (AW + 1)) == '0) &&
             ((AW + 1)'(addr) >= base) && (end_addr <= (AW + 2)'(limit));
  endfunction

  logic [DW+1:0] d_offb, d_in_total;
  logic [7:0] dec_err;
  logic bad_s, bad_sb;
  localparam int unsigned MbM1 = MemBytes - 1;
  assign d_offb     = ((DW + 2)'(d_in_bytes) + (DW + 2)'(MbM1)) & ~((DW + 2)'(MbM1));
  assign d_in_total = is_add ? d_offb + (DW + 2)'(d_in_bytes) : (DW + 2)'(d_in_bytes);
  assign bad_s      = (f_sq == 8'd0) || (f_sq > 8'(nasa_pkg::MaxShift));
  assign bad_sb     = (f_sb == 8'd0) || (f_sb > 8'(nasa_pkg::MaxShift));

  always_comb begin
    dec_err = nasa_pkg::ErrNone;
    if (f_op == 8'd0 || f_op > 8'(nasa_pkg::OpGap)) begin
      dec_err = nasa_pkg::ErrBadOpcode;
    end else if (f_act > 8'(nasa_pkg::ActRelu6)) begin
      dec_err = nasa_pkg::ErrBadAct;
    end else if (is_win && f_s != 8'd1 && f_s != 8'd2) begin
      dec_err = nasa_pkg::ErrBadStride;
    end else if (((is_conv || is_dw) && f_k != 8'd1 && f_k != 8'd3 && f_k != 8'd5 &&
                  f_k != 8'd7) || (is_pool && f_k != 8'd3)) begin
      dec_err = nasa_pkg::ErrBadKernel;
    end else if (f_h == '0 || f_w == '0 || f_cin == '0 || f_cout == '0) begin
      dec_err = nasa_pkg::ErrZeroDim;
    end else if ((is_dw || is_pool || is_add || is_gap) && f_cout != f_cin) begin
      dec_err = nasa_pkg::ErrBadChannels;
    end else if (d_in_total > (DW + 2)'(InBufBytes) ||
                 ((is_conv || is_fc) && d_kred > DW'(KredMax))) begin
      dec_err = nasa_pkg::ErrOversize;
    end else if (((is_avg || is_gap || is_add) && bad_s) || (is_add && bad_sb) ||
                 (f_act == 8'(nasa_pkg::ActRelu6) && f_q6 > 8'd127)) begin
      dec_err = nasa_pkg::ErrBadQuant;
    end else if (win_bad_q) begin
      dec_err = nasa_pkg::ErrWindow;
    end
  end

  // The window checks of a descriptor's regions share one checker, one region per decode step
  // once its size is known (input and second input from step 2, output from 6, weights and
  // per-channel records from 7); win_bad_q holds the verdict by step 11.
  logic [31:0] wc_addr;
  logic [DW-1:0] wc_len;
  logic wc_en, win_bad_q;
  always_comb begin
    wc_en   = 1'b0;
    wc_addr = f_in;
    wc_len  = d_in_bytes;
    unique case (dec_step_q)
      4'd2: wc_en = 1'b1;
      4'd3: begin wc_en = is_add; wc_addr = f_in2; end
      4'd6: begin wc_en = 1'b1; wc_addr = f_out; wc_len = d_out_bytes; end
      4'd7: begin wc_en = is_conv || is_fc || is_dw; wc_addr = f_wgt; wc_len = d_wgt_bytes; end
      4'd8: begin wc_en = is_conv || is_fc || is_dw; wc_addr = f_prm; wc_len = DW'(f_cout) << 3; end
      default: ;
    endcase
  end
  always_ff @(posedge clk_i) begin
    if (state_q == StDecode) begin
      if (dec_step_q == 4'd0) win_bad_q <= 1'b0;
      else if (wc_en && !in_win(wc_addr, wc_len, win_base_a, win_limit_a)) win_bad_q <= 1'b1;
    end
  end

  // The outputs of the two layers started before the one decoding (by layer index parity), and
  // whether its input, second input, weights or records overlap them (checked over the decode
  // steps with one comparator, once each size is known): a layer that reads what an unfinished
  // layer writes starts loading only when that layer is done.
  logic [AW:0] ot_lo_q [2];
  logic [AW:0] ot_hi_q [2];
  logic [1:0] hz_q;  // [0]: overlaps layer fe_li_q - 1, [1]: layer fe_li_q - 2
  logic [31:0] hc_addr;
  logic [DW-1:0] hc_len;
  logic hc_en, hc_old, hc_hit;
  logic [AW:0] hc_end;  // (a valid layer's ranges end at most at 2^AW)
  always_comb begin
    hc_en   = 1'b0;
    hc_addr = f_in;
    hc_len  = d_in_bytes;
    unique case (dec_step_q)
      4'd2, 4'd3: hc_en = 1'b1;
      4'd4, 4'd5: begin hc_en = is_add; hc_addr = f_in2; end
      4'd7, 4'd8: begin
        hc_en   = is_conv || is_fc || is_dw;
        hc_addr = f_wgt;
        hc_len  = d_wgt_bytes;
      end
      4'd9, 4'd10: begin
        hc_en   = is_conv || is_fc || is_dw;
        hc_addr = f_prm;
        hc_len  = DW'(f_cout) << 3;
      end
      default: ;
    endcase
  end
  // odd steps compare with the layer two back (its parity is the decoding layer's)
  assign hc_old = dec_step_q[0];
  assign hc_end = (AW + 1)'(hc_addr[AW-1:0]) + hc_len[AW:0];
  assign hc_hit = ((AW + 1)'(hc_addr[AW-1:0]) < ot_hi_q[fe_li_q[0] ^ !hc_old]) &&
                  (ot_lo_q[fe_li_q[0] ^ !hc_old] < hc_end);
  always_ff @(posedge clk_i) begin
    if (state_q == StDecode) begin
      if (dec_step_q == 4'd0) hz_q <= '0;
      else if (hc_en && hc_hit) hz_q[hc_old] <= 1'b1;
    end
  end

  // ======================= decoded layer constants =======================
  // What the decoded descriptor sets in the units: the loaders take their part when the layer
  // starts loading (ld_start), the issue stage and drain the rest through the next-layer bank
  // (nx_*) when it starts computing (cs_start).
  logic dv_pe, dv_wrow, dv_dw, dv_bchk, dv_add, dv_need_all;
  logic [1:0] dv_vmode, dv_rq;
  logic [15:0] dv_kh, dv_kw, dv_hi, dv_wi, dv_wo, dv_stride;
  logic [KW-1:0] dv_cin_n, dv_kred;
  logic [PW-1:0] dv_p, dv_npt;
  logic [JW-1:0] dv_nct;
  logic [OW-1:0] dv_cstep, dv_rowk, dv_stepx, dv_stepwrap, dv_srowb;
  logic [OW-1:0] dv_na, dv_in_total, dv_in_end;
  logic [WRW-1:0] dv_tsz;
  assign dv_pe       = is_conv || is_fc || is_dw;
  assign dv_wrow     = is_conv || is_fc;
  assign dv_dw       = is_dw;
  assign dv_bchk     = is_win;
  assign dv_add      = is_add;
  assign dv_need_all = is_fc || is_gap;
  assign dv_vmode    = is_max ? 2'd2 : (is_add ? 2'd3 : 2'd1);
  assign dv_rq       = (is_conv || is_fc || is_dw) ? RqChan :
                       ((is_max || is_add) ? RqBypass : RqDesc);
  assign dv_kh       = is_win ? f_kwin : (is_gap ? f_h : (is_add ? 16'd2 : 16'd1));
  assign dv_kw       = is_win ? f_kwin : (is_gap ? f_w : 16'd1);
  assign dv_hi       = g_take ? f_ho : f_h;
  assign dv_wi       = g_take ? f_wo : f_w;
  assign dv_wo       = (is_fc || is_gap) ? 16'd1 : f_wo;
  assign dv_stride   = (is_win && !g_take) ? 16'(f_s) : 16'd1;
  assign dv_cin_n    = is_conv ? KW'(f_cin) : (is_fc ? KW'(d_kred) : KW'(1));
  assign dv_kred     = KW'(d_kred);
  assign dv_cstep    = g_take ? OW'(f_cpad) : OW'(f_cin);
  // (mul_p: step 11's product, the gathered row bytes, held while decode waits at step 11)
  assign dv_rowk     = g_take ? OW'(mul_p) : (is_add ? OW'(d_offb) : OW'(d_row_b));
  assign dv_p        = (is_fc || is_gap) ? PW'(1) : PW'(d_hw_out);
  assign dv_stepx    = g_take ? OW'(f_cpad) : OW'(f_scin);
  assign dv_stepwrap = g_take ? OW'(f_cpad) :
                       ((is_win && f_s == 8'd2) ? OW'(d_row_b) << 1 : OW'(d_row_b)) - OW'(d_wrap);
  assign dv_srowb    = g_take ? OW'(mul_p) :
                       ((is_win && f_s == 8'd2) ? OW'(d_row_b) << 1 : OW'(d_row_b));
  assign dv_nct      = JW'((32'(f_cout) + 32'(Cols - 1)) >> ColW);
  assign dv_npt      = (is_conv || is_fc || is_dw) ?
                       PW'(((is_fc ? PW'(1) : PW'(d_hw_out)) + PW'(Rows - 1)) >> RowW) :
                       (is_gap ? PW'(1) : PW'(d_hw_out));
  assign dv_na       = g_take ? OW'(d_vbytes) : OW'(d_in_bytes);
  assign dv_in_total = g_take ? OW'(d_vbytes) : OW'(d_in_total);
  // input-buffer bytes the loader writes (whole port words): the layer's extent in the buffer
  assign dv_in_end   = g_take ? OW'(d_vbytes) : (is_add ? OW'(d_offb) << 1 : OW'(d_offb));
  assign dv_tsz      = WRW'((32'(is_dw ? 32'(f_kk) : 32'(d_kred)) + 32'(MbM1)) & ~32'(MbM1));

  // ======================= layer registers =======================
  // r_q: the layer the issue stage computes (slot A); nx_q: the next one, decoded and loading
  // (slot B), moved to r_q at cs_start. Position 0's window corner is CW-bit signed (dimensions
  // are 16-bit, a corner lies in [-3, 2^16 + 8]).
  typedef struct packed {
    logic pe;         // the layer uses the PE array, weights and records
    logic wrow;       // Conv/Fc: weights in rows, loaded column by column
    logic dw;         // DwConv (on the PE array: lane r reads Cols channels of its pixel)
    logic bchk;       // sliding window: taps outside the image read zero
    logic add, need_all;
    logic [1:0] vmode, rq, act;
    logic [7:0] q6, s, sb;
    logic [15:0] m, mb, kh, kw, wo, hi, wi, stride, cout, cin;
    logic [KW-1:0] cin_n;
    logic [PW-1:0] p, npt;
    logic [JW-1:0] nct;
    logic [OW-1:0] cstep, rowk, stepx, stepwrap, srowb;
    logic [OW-1:0] offb, in_total, in_end;
    logic [AW-1:0] out;
    logic [IAW-1:0] ib;   // the layer's place in the input buffer (a ring)
    logic par;            // layer parity: which input-arrival counter is the layer's
    logic [31:0] idx;     // its descriptor index
    logic [CW-1:0] p0_ixy;             // position 0: top-left window corner (signed),
    logic [OW-1:0] p0_pbase, p0_rowbase;  // its input byte and row offsets
  } layer_t;
  layer_t r_q, nx_q;
  logic [PtrW-1:0] nx_rec0;  // the next layer's first weight tile

  // ======================= sequencer =======================
  // Three stages work on consecutive layers of a program: the front end (state_q: fetch,
  // decode) on layer fe_li_q, the loaders on the newest started layer, the issue stage on slot
  // A (a_v_q) while slot B (b_v_q) holds the next, loading; finished tiles drain meanwhile.
  // A decoded layer starts loading (ld_start, into B) once the loaders are done with the layer
  // before, B is free, its input fits the input buffer beside the computing layer's, and it
  // reads nothing an unfinished layer writes; it starts computing (cs_start) when A is done.
  // A layer is complete when the writer has written its last row (ly_end). Errors of a later
  // layer are reported only once every layer before it is complete. Batch runs (ext mode) run
  // one layer at a time.
  logic [31:0] fe_li_q;         // descriptor the front end fetches / decodes
  logic a_v_q, b_v_q;
  logic [2:0] pend_q;           // layers started (ld_start) and not complete
  logic ld_par_q;               // parity of the newest started layer
  logic [IAW-1:0] ld_ib_q;      // its place in the input buffer
  logic [IAW-1:0] ld_in_end_q;  // and its extent (modulo the buffer)
  logic in_ok, w_ok, sh_ok, want, fire;  // compute issue stage handshake (see below)
  logic quant_err, desc_in_win, ly_end, be_idle, a_fin, ld_start, cs_start, dec_ok;
  logic ld_free, in_room, hz_ok;
  logic [31:0] desc_src;
  logic [OW-1:0] in_loaded_q [2];  // input bytes arrived, by layer parity
  assign desc_src    = ext_q ? xd_tpl_i : desc_addr + (fe_li_q << 6);
  assign desc_in_win = in_win(desc_src, DW'(nasa_pkg::DescBytes), win_base_a, win_limit_a);

  logic desc_job, desc_arrived;
  assign desc_job     = (state_q == StFetch) && desc_in_win &&
                        (!ext_q || (xd_valid_i && !xd_end_i));
  assign xd_ready_o   = ext_q && desc_job && job_ready;
  assign ext_wait_o   = ext_q && (state_q == StFetch) && dma_idle;
  assign desc_arrived = o_valid && o_last && o_dst == DstDesc;

  assign be_idle  = (pend_q == '0);
  assign a_fin    = a_v_q && c_done_q && (in_loaded_q[r_q.par] == r_q.in_end);
  assign dec_ok   = (state_q == StDecode) && (dec_step_q == 4'd11) &&
                    (dec_err == nasa_pkg::ErrNone);
  assign in_room  = !a_v_q ||
                    ((OW + 1)'(r_q.in_end) + (OW + 1)'(dv_in_end) <= (OW + 1)'(InBufBytes));
  assign hz_ok    = (pend_q <= 3'd2) && !(hz_q[0] && pend_q >= 3'd1) &&
                    !(hz_q[1] && pend_q >= 3'd2);
  assign ld_start = dec_ok && !b_v_q && ld_free && (ext_q ? be_idle : (in_room && hz_ok));
  assign cs_start = b_v_q && (!a_v_q || a_fin);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q       <= StIdle;
      dec_step_q    <= '0;
      fe_li_q       <= '0;
      a_v_q         <= 1'b0;
      b_v_q         <= 1'b0;
      pend_q        <= '0;
      ld_par_q      <= 1'b0;
      ld_ib_q       <= '0;
      ld_in_end_q   <= '0;
      ext_q         <= 1'b0;
      xq_x          <= '0;
      xq_y          <= '0;
      xq_l          <= '0;
      err_q         <= '0;
      err_index_q   <= '0;
      layers_done_q <= '0;
      finish        <= 1'b0;
    end else begin
      finish <= 1'b0;
      unique case (state_q)
        StIdle: begin
          if (start) begin
            fe_li_q       <= '0;
            a_v_q         <= 1'b0;
            b_v_q         <= 1'b0;
            pend_q        <= '0;
            ld_par_q      <= 1'b0;
            ld_ib_q       <= '0;
            ld_in_end_q   <= '0;
            layers_done_q <= '0;
            err_q         <= nasa_pkg::ErrNone;
            err_index_q   <= '0;
            ext_q         <= start_batch;
            if (start_batch) begin
              state_q <= StFetch;
            end else if (desc_count == '0) begin
              err_q  <= nasa_pkg::ErrEmptyProgram;
              finish <= 1'b1;
            end else begin
              state_q <= StFetch;
            end
          end
        end
        StFetch: begin
          if (ext_q && xd_end_i) begin
            err_q       <= xd_err_i;
            err_index_q <= xd_err_index_i;
            if (xd_err_i != nasa_pkg::ErrNone) begin
              state_q <= StAbort;
            end else begin
              state_q <= StIdle;
              finish  <= 1'b1;
            end
          end else if (ext_q && !xd_valid_i) begin
            state_q <= StFetch;
          end else if (!desc_in_win) begin
            if (be_idle) begin  // the layers before it complete first
              err_q       <= nasa_pkg::ErrWindow;
              err_index_q <= fe_li_q;
              state_q     <= StAbort;
            end
          end else if (job_ready) begin
            state_q <= StFetchWait;
            xq_x    <= xd_x_i;
            xq_y    <= xd_y_i;
            xq_l    <= xd_l_i;
          end
        end
        StFetchWait: begin
          if (desc_arrived) begin
            state_q    <= StDecode;
            dec_step_q <= '0;
          end
        end
        StDecode: begin
          if (dec_step_q != 4'd11) begin
            dec_step_q <= dec_step_q + 4'd1;
          end else if (dec_err != nasa_pkg::ErrNone) begin
            if (be_idle) begin
              err_q       <= dec_err;
              err_index_q <= fe_li_q;
              state_q     <= StAbort;
            end
          end else if (ld_start) begin
            fe_li_q <= fe_li_q + 1;
            state_q <= (!ext_q && fe_li_q + 1 != desc_count) ? StFetch : StRun;
          end
        end
        StRun: begin
          // every descriptor started (programs) or one batch layer runs: wait for completion
          if (be_idle && dma_idle) begin
            if (ext_q) begin
              state_q <= StFetch;
            end else begin
              state_q <= StIdle;
              finish  <= 1'b1;
            end
          end
        end
        StAbort: begin
          if (dma_idle) begin
            state_q <= StIdle;
            finish  <= 1'b1;
          end
        end
        default: state_q <= StIdle;
      endcase
      // the back end
      if (ld_start) begin
        b_v_q       <= 1'b1;
        ld_par_q    <= !ld_par_q;
        ld_ib_q     <= ld_ib_q + ld_in_end_q;
        ld_in_end_q <= IAW'(dv_in_end);
      end
      if (cs_start) begin
        a_v_q <= 1'b1;
        if (!ld_start) b_v_q <= 1'b0;
      end else if (a_fin) begin
        a_v_q <= 1'b0;
      end
      pend_q <= pend_q + 3'(ld_start) - 3'(ly_end);
      if (ly_end) layers_done_q <= layers_done_q + 1;
      if (quant_err) begin
        err_q       <= nasa_pkg::ErrBadQuant;
        err_index_q <= r_q.idx;
        state_q     <= StAbort;
      end
      if (quant_err || state_q == StAbort) begin
        a_v_q <= 1'b0;
        b_v_q <= 1'b0;
      end
    end
  end
  assign dma_abort = (state_q == StAbort);
  assign xd_done_o   = ext_q && ly_end;
  assign layer_end_o = ly_end;

  // the next bank takes the decoded layer at ld_start, the issue stage's bank takes it at cs_start
  always_ff @(posedge clk_i) begin
    if (ld_start) begin
      ot_lo_q[fe_li_q[0]] <= (AW + 1)'(f_out[AW-1:0]);
      ot_hi_q[fe_li_q[0]] <= (AW + 1)'(f_out[AW-1:0]) + (AW + 1)'(d_out_bytes[AW:0]);
      nx_q.pe         <= dv_pe;
      nx_q.wrow       <= dv_wrow;
      nx_q.dw         <= dv_dw;
      nx_q.bchk       <= dv_bchk;
      nx_q.add        <= dv_add;
      nx_q.need_all   <= dv_need_all;
      nx_q.vmode      <= dv_vmode;
      nx_q.rq         <= dv_rq;
      nx_q.act        <= f_act[1:0];
      nx_q.q6         <= f_q6;
      nx_q.m          <= f_m;
      nx_q.s          <= f_sq;
      nx_q.mb         <= f_mb;
      nx_q.sb         <= f_sb;
      nx_q.kh         <= dv_kh;
      nx_q.kw         <= dv_kw;
      nx_q.hi         <= dv_hi;
      nx_q.wi         <= dv_wi;
      nx_q.wo         <= dv_wo;
      nx_q.stride     <= dv_stride;
      nx_q.cout       <= f_cout;
      nx_q.cin        <= f_cin;
      nx_q.cin_n      <= dv_cin_n;
      nx_q.cstep      <= dv_cstep;
      nx_q.rowk       <= dv_rowk;
      nx_q.p          <= dv_p;
      nx_q.stepx      <= dv_stepx;
      nx_q.stepwrap   <= dv_stepwrap;
      nx_q.srowb      <= dv_srowb;
      nx_q.nct        <= dv_nct;
      nx_q.npt        <= dv_npt;
      nx_q.offb       <= OW'(d_offb);
      nx_q.in_total   <= dv_in_total;
      nx_q.in_end     <= dv_in_end;
      nx_q.out        <= AW'(f_out);
      nx_q.ib         <= ld_ib_q + ld_in_end_q;
      nx_q.par        <= !ld_par_q;
      nx_q.idx        <= fe_li_q;
      nx_q.p0_ixy     <= CW'(0) - CW'(f_pad);
      nx_q.p0_pbase   <= -(OW'(d_padrow) + OW'(d_padcin));
      nx_q.p0_rowbase <= OW'(0) - OW'(d_padrow);
      nx_rec0         <= reuse ? pw_rec0_q : rec_wr_q;
    end
    if (cs_start) r_q <= nx_q;
  end

  // ======================= input loader =======================
  // Segments of input, each read in Chunk-byte jobs: the whole input (and Add's second input at
  // il_offb_q), or with the pixel gather one segment of Cin bytes per used pixel into il_cpad_q
  // slots; written at the layer's place ld_ib_q in the input buffer (a ring), its arrivals
  // counted by layer parity (the tag's flag).
  logic il_region_q, il_done_q, il_valid, il_grant, stop;
  logic [OW-1:0] il_off_q, il_left;
  logic [AW-1:0] il_src_q, il_rsrc_q;  // segment source; gather: source of the row's pixel 0
  logic [OW-1:0] il_dst_q;             // segment destination in the layer's buffer region
  logic [15:0] il_x_q;                 // gather: output column of the segment
  // the loading layer's constants (taken at ld_start)
  logic il_g_q, il_add_q;
  logic [15:0] il_cin_q, il_wo_q;
  logic [OW-1:0] il_na_q, il_cpad_q, il_offb_q;
  logic [AW-1:0] il_in2_q, il_gstep_q, il_grow_q;
  assign stop     = (state_q == StAbort);
  assign il_valid = !il_done_q && !stop;
  assign il_left  = (il_g_q ? OW'(il_cin_q) : il_na_q) - il_off_q;

  always_ff @(posedge clk_i) begin
    if (ld_start) begin
      il_g_q     <= g_take;
      il_add_q   <= is_add;
      il_cin_q   <= f_cin;
      il_wo_q    <= dv_wo;
      il_na_q    <= dv_na;
      il_cpad_q  <= OW'(f_cpad);
      il_offb_q  <= OW'(d_offb);
      il_in2_q   <= AW'(f_in2);
      il_gstep_q <= AW'(f_scin);
      il_grow_q  <= AW'(d_row_b) << 1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      il_region_q <= 1'b0;
      il_done_q   <= 1'b1;
      il_off_q    <= '0;
      il_src_q    <= '0;
      il_rsrc_q   <= '0;
      il_dst_q    <= '0;
      il_x_q      <= '0;
    end else if (ld_start) begin
      il_region_q <= 1'b0;
      il_done_q   <= 1'b0;
      il_off_q    <= '0;
      il_src_q    <= AW'(f_in);
      il_rsrc_q   <= AW'(f_in);
      il_dst_q    <= '0;
      il_x_q      <= '0;
    end else if (stop) begin
      il_done_q <= 1'b1;
    end else if (il_grant) begin
      if (il_left <= OW'(Chunk)) begin
        il_off_q <= '0;
        if (il_g_q && il_dst_q + il_cpad_q < il_na_q) begin
          il_dst_q <= il_dst_q + il_cpad_q;
          if (il_x_q + 16'd1 == il_wo_q) begin
            il_x_q    <= '0;
            il_rsrc_q <= il_rsrc_q + il_grow_q;
            il_src_q  <= il_rsrc_q + il_grow_q;
          end else begin
            il_x_q   <= il_x_q + 16'd1;
            il_src_q <= il_src_q + il_gstep_q;
          end
        end else if (il_add_q && !il_region_q) begin
          il_region_q <= 1'b1;
          il_src_q    <= il_in2_q;
          il_dst_q    <= il_offb_q;
        end else begin
          il_done_q <= 1'b1;
        end
      end else begin
        il_off_q <= il_off_q + OW'(Chunk);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_loaded_q[0] <= '0;
      in_loaded_q[1] <= '0;
    end else begin
      if (o_valid && o_dst == DstIn) begin
        in_loaded_q[o_flag] <= in_loaded_q[o_flag] + OW'(MemBytes);
      end
      // (the counter's last layer is complete: all its input arrived, see a_fin)
      if (ld_start) in_loaded_q[!ld_par_q] <= '0;
    end
  end

  // ======================= tile loader (weights + per-channel params) =======================
  // Channel tiles go into the weight ring one after another, each with a record slot for its
  // per-channel records: tile bytes are k*k*Cin (Conv/Fc) or k*k (DwConv) per lane, rounded up to
  // the port width. Records are freed oldest first, and only when the loader needs room and the
  // compute has moved past them (rec_rd_q != c_rec_q), so the last tiles stay in the ring.
  logic [1:0] tl_phase_q;  // 0: allocate a tile, 1: param job, 2: weight jobs
  // Conv/Fc weights of a tile load column by column (WChunk bytes of every row, then the next
  // WChunk): the PE array starts on a tile as soon as the columns its next steps read are in.
  logic [JW-1:0] tl_j_q;
  logic [CoW-1:0] tl_co0_q;
  logic [7:0] tl_row_q;        // row of a weight column (< Cols) or depthwise tap (< 49)
  logic [KW-1:0] tl_off_q;      // offset of the weight column in a row (< KredMax)
  logic [AW-1:0] tl_row_src_q, tl_rsrc_q, tl_tap_src_q, tl_tapbase_q;
  logic [NW-1:0] tl_cg_q;
  logic [WRW-1:0] tl_base_q;    // ring address of the tile being issued
  logic tl_valid, tl_grant;
  logic [AW-1:0] tl_src;
  logic [31:0] tl_len;
  logic [KW-1:0] tl_rest;
  logic [TagW-1:0] tl_tag;
  logic tl_colend;
  logic [WRW-1:0] tl_waddr;  // ring address of the next weight job (wraps at WDepth)
  // the ring: tiles [rec_rd_q, rec_wr_q) are live, [rec_rd_q, rec_fill_q) complete; the compute
  // reads tile c_rec_q; rsp_cols_q counts the complete weight columns of tile rec_fill_q
  logic [WRW-1:0] rg_head_q;
  logic [WRW:0] rg_used_q;
  logic [WRW-1:0] rec_base_q [WTiles];
  logic [WRW-1:0] rec_size_q [WTiles];
  logic [PtrW-1:0] rec_rd_q, rec_wr_q, rec_fill_q, c_rec_q, rec_n;
  logic [HJW-1:0] rsp_cols_q;
  // the loading layer's constants (taken at ld_start)
  logic tl_pe_q, tl_wrow_q;
  logic [JW-1:0] tl_nct_q;
  logic [AW-1:0] tl_prm_q;
  logic [15:0] tl_cout_q, tl_cin_q, tl_kk_q;
  logic [KW-1:0] tl_kred_q;
  logic [WRW-1:0] tl_tsz_q;  // ring bytes of one tile
  always_ff @(posedge clk_i) begin
    if (ld_start) begin
      tl_wrow_q <= dv_wrow;
      tl_nct_q  <= dv_nct;
      tl_prm_q  <= AW'(f_prm);
      tl_cout_q <= f_cout;
      tl_cin_q  <= f_cin;
      tl_kk_q   <= f_kk;
      tl_kred_q <= dv_kred;
      tl_tsz_q  <= dv_tsz;
    end
  end
  logic ahead_ok, space_ok, evict_ok;

  assign tl_rest   = tl_kred_q - tl_off_q;
  assign tl_colend = (9'(tl_row_q) + 9'd1 == 9'(tl_cg_q));
  assign rec_n     = rec_wr_q - rec_rd_q;
  // the loader stays at most one tile ahead of the compute (loading further ahead takes the memory
  // port from the output writes); it evicts only when the ring has no room for the next tile
  assign ahead_ok  = (rec_wr_q - c_rec_q < PtrW'(2));
  assign space_ok  = (rec_n != PtrW'(WTiles)) &&
                     ((WRW + 1)'(rg_used_q) + (WRW + 1)'(tl_tsz_q) <= (WRW + 1)'(WDepth));
  assign evict_ok  = (rec_n != '0) && (rec_rd_q != c_rec_q);

  assign tl_waddr = tl_base_q + (tl_wrow_q ? WRW'(tl_off_q) : WRW'(tl_row_q));
  always_comb begin
    tl_valid = !stop && tl_pe_q && (tl_phase_q != 2'd0);
    tl_src   = '0;
    tl_len   = '0;
    tl_tag   = '0;
    if (tl_phase_q == 2'd1) begin
      tl_src = tl_prm_q + (AW'(tl_co0_q) << 3);
      tl_len = 32'(tl_cg_q) << 3;
      tl_tag = {BaseW'(TRW'(rec_wr_q - PtrW'(1))), 8'd0, 1'b0, DstPrm};
    end else if (tl_wrow_q) begin
      tl_src = tl_rsrc_q;
      tl_len = (32'(tl_rest) > 32'(WChunk)) ? 32'(WChunk) : 32'(tl_rest);
      tl_tag = {BaseW'(tl_waddr), tl_colend, tl_row_q[6:0],
                tl_colend && 32'(tl_rest) <= 32'(WChunk), DstWRow};
    end else begin
      tl_src = tl_tap_src_q;
      tl_len = 32'(tl_cg_q);
      tl_tag = {BaseW'(tl_waddr), 8'd0, 16'(tl_row_q) + 16'd1 == tl_kk_q,
                DstWScat};
    end
  end

  logic [CoW-1:0] cg_full;
  assign cg_full = CoW'(tl_cout_q) - tl_co0_q;

  // weight responses (any layer's: they arrive while the loader works on the next)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rec_fill_q <= '0;
      rsp_cols_q <= '0;
    end else if (start && state_q == StIdle) begin
      rec_fill_q <= '0;
      rsp_cols_q <= '0;
    end else if (o_valid && o_last && (o_dst == DstWRow || o_dst == DstWScat)) begin
      if (o_flag) begin
        rec_fill_q <= rec_fill_q + PtrW'(1);
        rsp_cols_q <= '0;
      end else if (o_dst == DstWRow && o_bank[7]) begin
        rsp_cols_q <= rsp_cols_q + HJW'(1);
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (tl_phase_q == 2'd0 && !stop && tl_pe_q && tl_j_q < tl_nct_q && ahead_ok && space_ok) begin
      rec_base_q[TRW'(rec_wr_q)] <= rg_head_q;
      rec_size_q[TRW'(rec_wr_q)] <= tl_tsz_q;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tl_phase_q   <= '0;
      tl_j_q       <= '0;
      tl_co0_q     <= '0;
      tl_row_q     <= '0;
      tl_off_q     <= '0;
      tl_row_src_q <= '0;
      tl_rsrc_q    <= '0;
      tl_tap_src_q <= '0;
      tl_tapbase_q <= '0;
      tl_cg_q      <= '0;
      tl_base_q    <= '0;
      rg_head_q    <= '0;
      rg_used_q    <= '0;
      rec_rd_q     <= '0;
      rec_wr_q     <= '0;
      tl_pe_q      <= 1'b0;
    end else if (start && state_q == StIdle) begin
      // a run starts with an empty ring
      rg_head_q <= '0;
      rg_used_q <= '0;
      rec_rd_q  <= '0;
      rec_wr_q  <= '0;
    end else if (ld_start) begin
      tl_pe_q      <= dv_pe && !reuse;
      tl_phase_q   <= '0;
      tl_j_q       <= '0;
      tl_co0_q     <= '0;
      tl_row_src_q <= AW'(f_wgt);
      tl_tapbase_q <= AW'(f_wgt);
    end else if (stop) begin
      tl_pe_q    <= 1'b0;  // the loader idles
      tl_phase_q <= '0;
    end else begin
      unique case (tl_phase_q)
        2'd0: begin
          if (!stop && tl_pe_q && tl_j_q < tl_nct_q && ahead_ok) begin
            if (space_ok) begin
              tl_phase_q   <= 2'd1;
              tl_base_q    <= rg_head_q;
              rg_head_q    <= rg_head_q + tl_tsz_q;
              rg_used_q    <= rg_used_q + (WRW + 1)'(tl_tsz_q);
              rec_wr_q     <= rec_wr_q + PtrW'(1);
              tl_rsrc_q    <= tl_row_src_q;
              tl_cg_q      <= (cg_full > CoW'(Cols)) ? NW'(Cols) : NW'(cg_full);
              tl_row_q     <= '0;
              tl_off_q     <= '0;
              tl_tap_src_q <= tl_tapbase_q;
            end else if (evict_ok) begin
              rg_used_q <= rg_used_q - (WRW + 1)'(rec_size_q[TRW'(rec_rd_q)]);
              rec_rd_q  <= rec_rd_q + PtrW'(1);
            end
          end
        end
        2'd1: begin
          if (tl_grant) tl_phase_q <= 2'd2;
        end
        default: begin
          if (tl_grant) begin
            if (tl_wrow_q) begin
              if (tl_colend) begin
                tl_row_q <= '0;
                if (32'(tl_rest) <= 32'(WChunk)) begin
                  tl_phase_q   <= 2'd0;
                  tl_j_q       <= tl_j_q + JW'(1);
                  tl_co0_q     <= tl_co0_q + CoW'(Cols);
                  tl_row_src_q <= tl_row_src_q + (AW'(tl_kred_q) << ColW);
                end else begin
                  tl_off_q  <= tl_off_q + KW'(WChunk);
                  tl_rsrc_q <= tl_row_src_q + AW'(tl_off_q) + AW'(WChunk);
                end
              end else begin
                tl_row_q  <= tl_row_q + 8'd1;
                tl_rsrc_q <= tl_rsrc_q + AW'(tl_kred_q);
              end
            end else begin
              tl_tap_src_q <= tl_tap_src_q + AW'(tl_cin_q);
              tl_row_q     <= tl_row_q + 8'd1;
              if (16'(tl_row_q) + 16'd1 == tl_kk_q) begin
                tl_phase_q   <= 2'd0;
                tl_j_q       <= tl_j_q + JW'(1);
                tl_co0_q     <= tl_co0_q + CoW'(Cols);
                tl_tapbase_q <= tl_tapbase_q + AW'(Cols);
              end
            end
          end
        end
      endcase
    end
  end

  // Weights kept on chip: a layer with the previous layer's weights and records (same addresses,
  // Cout and reduction: the mini-batch pattern, one image after another) computes from that
  // layer's tiles while all of them are still in the ring (its first is not evicted), and loads
  // none. (The layer before it writes nothing it reads: docs/engine.md, memory layout.)
  // pw_v_q: the previous layer used weights, and its first tile is still in the ring (cleared
  // when that tile is evicted; tiles leave in order, so the rest are then in too)
  logic pw_v_q, pw_wrow_q, reuse, pw_evict;
  logic [AW-1:0] pw_wgt_q, pw_prm_q;
  logic [15:0] pw_cout_q;
  logic [KW-1:0] pw_kred_q;
  logic [PtrW-1:0] pw_rec0_q;
  assign reuse    = pw_v_q && dv_pe && dv_wrow == pw_wrow_q && AW'(f_wgt) == pw_wgt_q &&
                    AW'(f_prm) == pw_prm_q && f_cout == pw_cout_q && dv_kred == pw_kred_q;
  assign pw_evict = tl_phase_q == 2'd0 && !stop && tl_pe_q && tl_j_q < tl_nct_q && ahead_ok &&
                    !space_ok && evict_ok && rec_rd_q == pw_rec0_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pw_v_q <= 1'b0;
    end else if (start && state_q == StIdle) begin
      pw_v_q <= 1'b0;
    end else if (pw_evict) begin
      pw_v_q <= 1'b0;  // (no ld_start now: the loader is busy)
    end else if (ld_start) begin
      pw_v_q    <= dv_pe && !ext_q;  // (batch runs: a layer at a time, no reuse)
      pw_wrow_q <= dv_wrow;
      pw_wgt_q  <= AW'(f_wgt);
      pw_prm_q  <= AW'(f_prm);
      pw_cout_q <= f_cout;
      pw_kred_q <= dv_kred;
      pw_rec0_q <= reuse ? pw_rec0_q : rec_wr_q;
    end
  end

  // ======================= job arbiter =======================
  // Loads the compute is waiting for go first: the weights of its channel tile before input
  // when both are missing, but input before the weights of a later tile (the tile loader runs
  // a tile ahead); otherwise input chunks and weight jobs alternate.
  logic rr_q, prefer_tl, prefer_il;
  assign prefer_tl = want && !w_ok && (rec_wr_q - PtrW'(1) == c_rec_q);
  assign prefer_il = want && !in_ok && !prefer_tl;
  always_comb begin
    il_grant  = 1'b0;
    tl_grant  = 1'b0;
    job_valid = 1'b0;
    job_src   = '0;
    job_len   = '0;
    job_tag   = '0;
    if (desc_job) begin
      job_valid = 1'b1;
      job_src   = AW'(desc_src);
      job_len   = 32'(nasa_pkg::DescBytes);
      job_tag   = {BaseW'(0), 8'd0, 1'b0, DstDesc};
    end else if (il_valid && (!tl_valid || (!prefer_tl && (prefer_il || !rr_q)))) begin
      job_valid = 1'b1;
      job_src   = il_src_q + AW'(il_off_q);
      job_len   = (il_left > OW'(Chunk)) ? 32'(Chunk) : 32'(il_left);
      job_tag   = {BaseW'(IAW'(ld_ib_q + IAW'(il_dst_q + il_off_q))), 8'd0, ld_par_q, DstIn};
      il_grant  = job_ready;
    end else if (tl_valid) begin
      job_valid = 1'b1;
      job_src   = tl_src;
      job_len   = tl_len;
      job_tag   = tl_tag;
      tl_grant  = job_ready;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rr_q <= 1'b0;
    else if (il_grant) rr_q <= 1'b1;
    else if (tl_grant) rr_q <= 1'b0;
  end

  // ======================= buffers =======================
  logic [NumIn*IAW-1:0] in_raddr;
  logic [NumIn*Cols*8-1:0] in_wide;  // Cols bytes from each port's address
  logic [NumIn*8-1:0] in_rdata;      // the addressed bytes
  nasa_in_buf #(
    .Bytes   (InBufBytes),
    .MemBytes(MemBytes),
    .NumPorts(NumIn),
    .Width   (Cols)
  ) u_in_buf (
    .clk_i  (clk_i),
    .we_i   (o_valid && o_dst == DstIn),
    .waddr_i(o_addr[IAW-1:0]),
    .wdata_i(o_data),
    .raddr_i(in_raddr),
    .rdata_o(in_wide)
  );
  always_comb begin
    for (int q = 0; q < NumIn; q++) in_rdata[q*8 +: 8] = in_wide[q*Cols*8 +: 8];
  end

  logic [WAW-1:0] c_widx_q;
  logic [Cols*8-1:0] w_rdata;
  nasa_wbuf #(
    .Cols    (Cols),
    .MemBytes(MemBytes),
    .Depth   (WDepth)
  ) u_wbuf (
    .clk_i    (clk_i),
    .we_i     (o_valid && (o_dst == DstWRow || o_dst == DstWScat)),
    .scatter_i(o_dst == DstWScat),
    .wbank_i  (o_bank[ColW-1:0]),
    .waddr_i  (o_addr[WRW-1:0]),
    .wdata_i  (o_data),
    .raddr_i  (rec_base_q[TRW'(c_rec_q)] + WRW'(c_widx_q)),
    .rdata_o  (w_rdata)
  );

  // per-channel parameter records, Cols x {rsv, S, M, bias} per record slot in NPW port words;
  // prm_cur_q holds the records of the tile the compute reads (c_rec_q), read one cycle ahead
  logic [MemBytes*8-1:0] prm_mem_q [WTiles * NPW];
  logic [NPW*MemBytes*8-1:0] prm_rd_q;
  logic [Cols*64-1:0] prm_cur;
  logic [PtrW-1:0] c_rec_d;
  always_ff @(posedge clk_i) begin
    if (o_valid && o_dst == DstPrm) begin
      prm_mem_q[32'(o_tag[12 +: TRW]) * NPW + 32'(o_idx)] <= o_data;
    end
    for (int w = 0; w < NPW; w++) begin
      prm_rd_q[w*MemBytes*8 +: MemBytes*8] <= prm_mem_q[32'(TRW'(c_rec_d)) * NPW + w];
    end
  end
  assign prm_cur = prm_rd_q[Cols*64-1:0];

  // ======================= compute issue stage =======================
  // one output position per PE row (lane 0 is the pixel of the vector unit): column ox, top-left
  // window corner (iy0, ix0, signed), input byte offset of that corner (pbase) and of its row
  // (rowbase), output byte offset (out) and position index (p)
  logic [15:0] l_ox [Rows];
  logic [CW-1:0] l_iy0 [Rows];
  logic [CW-1:0] l_ix0 [Rows];
  logic [OW-1:0] l_pbase [Rows];
  logic [OW-1:0] l_rowbase [Rows];
  logic [AW-1:0] l_out [Rows];
  logic [PW-1:0] l_p [Rows];
  logic [15:0] n_ox [Rows];
  logic [CW-1:0] n_iy0 [Rows];
  logic [CW-1:0] n_ix0 [Rows];
  logic [OW-1:0] n_pbase [Rows];
  logic [OW-1:0] n_rowbase [Rows];
  logic [AW-1:0] n_out [Rows];
  logic [PW-1:0] n_p [Rows];
  logic [JW-1:0] c_j_q;
  logic [CoW-1:0] c_co0_q;
  logic [PW-1:0] c_pt_q;
  logic [KW-1:0] c_ci_q;
  logic [OW-1:0] c_kyoff_q, c_kxoff_q;
  logic [15:0] c_kx_q, c_ky_q;
  logic [NW-1:0] c_cg_q;
  logic c_done_q, c_reset_pos;

  logic last_ci, last_kx, last_ky, tile_last, last_pt, last_ct;
  assign last_ci   = (c_ci_q == r_q.cin_n - KW'(1));
  assign last_kx   = (c_kx_q == r_q.kw - 16'd1);
  assign last_ky   = (c_ky_q == r_q.kh - 16'd1);
  assign tile_last = last_ci && last_kx && last_ky;
  assign last_pt   = (c_pt_q == r_q.npt - PW'(1));
  assign last_ct   = (c_j_q == r_q.nct - JW'(1));
  // lanes of the first tile are built from position 0 in the cycle after decode
  logic init_lanes_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) init_lanes_q <= 1'b0;
    else init_lanes_q <= cs_start;
  end
  assign c_reset_pos = last_pt || init_lanes_q;

  // next lanes: chain of single-position steps from the last lane (PE) or lane 0 (vector unit),
  // or from position 0 when a new channel tile starts
  always_comb begin : p_chain
    logic [15:0] t_ox;
    logic [CW-1:0] t_iy0, t_ix0;
    logic [OW-1:0] t_pbase, t_rowbase;
    logic [AW-1:0] t_out;
    logic [PW-1:0] t_p;
    t_ox      = r_q.pe ? l_ox[Rows-1] : l_ox[0];
    t_iy0     = r_q.pe ? l_iy0[Rows-1] : l_iy0[0];
    t_ix0     = r_q.pe ? l_ix0[Rows-1] : l_ix0[0];
    t_pbase   = r_q.pe ? l_pbase[Rows-1] : l_pbase[0];
    t_rowbase = r_q.pe ? l_rowbase[Rows-1] : l_rowbase[0];
    t_out     = r_q.pe ? l_out[Rows-1] : l_out[0];
    t_p       = r_q.pe ? l_p[Rows-1] : l_p[0];
    for (int r = 0; r < Rows; r++) begin
      if (r == 0 && c_reset_pos) begin
        t_ox      = '0;
        t_iy0     = r_q.p0_ixy;
        t_ix0     = r_q.p0_ixy;
        t_pbase   = r_q.p0_pbase;
        t_rowbase = r_q.p0_rowbase;
        t_out     = '0;
        t_p       = '0;
      end else if (t_ox == r_q.wo - 16'd1) begin
        t_ox      = '0;
        t_iy0     = t_iy0 + CW'(r_q.stride);
        t_ix0     = r_q.p0_ixy;
        t_pbase   = t_pbase + r_q.stepwrap;
        t_rowbase = t_rowbase + r_q.srowb;
        t_out     = t_out + AW'(r_q.cout);
        t_p       = t_p + PW'(1);
      end else begin
        t_ox    = t_ox + 16'd1;
        t_ix0   = t_ix0 + CW'(r_q.stride);
        t_pbase = t_pbase + r_q.stepx;
        t_out   = t_out + AW'(r_q.cout);
        t_p     = t_p + PW'(1);
      end
      n_ox[r]      = t_ox;
      n_iy0[r]     = t_iy0;
      n_ix0[r]     = t_ix0;
      n_pbase[r]   = t_pbase;
      n_rowbase[r] = t_rowbase;
      n_out[r]     = t_out;
      n_p[r]       = t_p;
    end
  end

  // readiness of the next step
  logic [OW-1:0] koff, need;
  logic shadow_full_q, s1_valid_q, s1_last_q;
  logic [OW-1:0] rowbase_last;
  assign rowbase_last = r_q.pe ? l_rowbase[Rows-1] : l_rowbase[0];
  // (the lanes' input-buffer offsets are the layer's; its place r_q.ib is added here once)
  assign koff = c_kyoff_q + c_kxoff_q + OW'(c_ci_q) + OW'(r_q.ib);

  always_comb begin : p_need
    logic [OW-1:0] n;
    // rows up to the one the current kernel row ky reads (its offset is c_kyoff_q = ky*row_b)
    // (none while the row is above the image: padding)
    n = rowbase_last + c_kyoff_q + r_q.rowk;
    if ($signed(n) < 0) n = '0;
    if ($signed(n) > $signed(r_q.in_total)) n = r_q.in_total;
    if (r_q.need_all) n = r_q.in_total;
    else if (r_q.add) n = r_q.offb + l_pbase[0] + OW'(r_q.cin);
    need = n;
  end

  assign in_ok = (in_loaded_q[r_q.par] >= need);
  // Conv/Fc: the weight column of the next step is in; depthwise: the whole tile
  logic [WAW-1:0] w_col;
  logic [PtrW-1:0] c_fd;
  logic c_complete;
  assign w_col      = c_widx_q >> $clog2(WChunk);
  assign c_fd       = rec_fill_q - c_rec_q;
  assign c_complete = (c_fd != '0) && !c_fd[PtrW-1];  // tile c_rec_q is older than rec_fill_q
  assign w_ok       = !r_q.pe || c_complete ||
                      (r_q.wrow && c_rec_q == rec_fill_q && 32'(rsp_cols_q) > 32'(w_col));
  assign sh_ok = !tile_last || (!shadow_full_q && !(s1_valid_q && s1_last_q));
  assign want  = a_v_q && !c_done_q && !init_lanes_q;

  // a channel tile's per-channel records are checked before its first step
  logic first_step, tap0;
  // the first reduction step of a tile (c_widx_q cannot tell: it wraps at KredMax, and a global
  // average pool has H*W taps, up to InBufBytes)
  assign tap0       = (c_ci_q == '0) && (c_kx_q == '0) && (c_ky_q == '0);
  logic [Cols-1:0] s_bad;
  assign first_step = (c_pt_q == '0) && tap0;
  always_comb begin : p_sbad
    for (int l = 0; l < Cols; l++) begin : g_l
      logic [7:0] sv;
      sv = prm_cur[l*64 + 48 +: 8];
      s_bad[l] = (NW'(l) < c_cg_q) && (sv == 8'd0 || sv > 8'(nasa_pkg::MaxShift));
    end
  end
  // a bad record stops the run once every layer before this one is complete
  logic bad_rec;
  assign bad_rec   = (r_q.rq == RqChan) && first_step && (s_bad != '0);
  assign quant_err = want && w_ok && bad_rec && (layers_done_q == r_q.idx);
  assign fire      = want && w_ok && in_ok && sh_ok && !bad_rec;

  // per-lane input addresses and masks (offsets of valid taps lie inside the buffer, so only the
  // low IAW bits of an offset are used)
  logic [NumIn-1:0] mask;
  logic [$clog2(Rows+1)-1:0] n_act;
  logic [NumIn*(OW-IAW)-1:0] unused_a;
  always_comb begin : p_lanes
    logic [CW-1:0] iy, ix;
    logic [OW-1:0] a;
    logic inb;
    n_act = '0;
    unused_a = '0;
    for (int q = 0; q < NumIn; q++) begin
      mask[q] = 1'b0;
      in_raddr[q*IAW +: IAW] = '0;
      a = '0;
      if (r_q.pe) begin
        if (q < Rows) begin
          iy  = l_iy0[q] + CW'(c_ky_q);
          ix  = l_ix0[q] + CW'(c_kx_q);
          inb = !r_q.bchk || ($signed(iy) >= 0 && $signed(iy) < $signed(CW'(r_q.hi)) &&
                            $signed(ix) >= 0 && $signed(ix) < $signed(CW'(r_q.wi)));
          mask[q] = (l_p[q] < r_q.p) && inb;
          // DwConv: the Cols channels of the tile at this tap (a Cols-byte read)
          a = l_pbase[q] + koff + (r_q.dw ? OW'(c_co0_q) : OW'(0));
          in_raddr[q*IAW +: IAW] = a[IAW-1:0];
          n_act = n_act + (l_p[q] < r_q.p ? 1 : 0);
        end
      end else if (q < Cols) begin
        iy  = l_iy0[0] + CW'(c_ky_q);
        ix  = l_ix0[0] + CW'(c_kx_q);
        inb = !r_q.bchk || ($signed(iy) >= 0 && $signed(iy) < $signed(CW'(r_q.hi)) &&
                          $signed(ix) >= 0 && $signed(ix) < $signed(CW'(r_q.wi)));
        mask[q] = (q < c_cg_q) && inb;
        a = l_pbase[0] + koff + OW'(c_co0_q) + OW'(q);
        in_raddr[q*IAW +: IAW] = a[IAW-1:0];
      end
      unused_a[q*(OW-IAW) +: OW-IAW] = a[OW-1:IAW];
    end
  end

  // shadow (drain) metadata, written when a tile's last step issues
  logic [AW-1:0] sh_addr_q [Rows];
  logic [RowW:0] sh_rows_q;
  logic [NW-1:0] sh_n_q;
  logic sh_lend_q, sh_pe_q;  // the layer's last tile; PE array or vector unit results
  logic [1:0] sh_rq_q, sh_act_q;
  logic [7:0] sh_q6_q, sh_s_q;
  logic [15:0] sh_m_q;

  // the compute's tile: the layer's first at its start, the next one after each channel tile
  always_comb begin
    c_rec_d = c_rec_q;
    if (cs_start) c_rec_d = nx_rec0;
    else if (fire && tile_last && last_pt && r_q.pe) c_rec_d = c_rec_q + PtrW'(1);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) c_rec_q <= '0;
    else if (start && state_q == StIdle) c_rec_q <= '0;
    else c_rec_q <= c_rec_d;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      c_j_q      <= '0;
      c_co0_q    <= '0;
      c_cg_q     <= '0;
      c_pt_q     <= '0;
      c_ci_q     <= '0;
      c_kx_q     <= '0;
      c_ky_q     <= '0;
      c_kyoff_q  <= '0;
      c_kxoff_q  <= '0;
      c_widx_q   <= '0;
      c_done_q   <= 1'b1;
      sh_rows_q  <= '0;
      sh_n_q     <= '0;
      sh_lend_q  <= 1'b0;
      sh_pe_q    <= 1'b0;
      sh_rq_q    <= '0;
      sh_act_q   <= '0;
      sh_q6_q    <= '0;
      sh_m_q     <= '0;
      sh_s_q     <= '0;
    end else if (cs_start) begin
      c_j_q     <= '0;
      c_co0_q   <= '0;
      c_cg_q    <= (nx_q.cout > 16'(Cols)) ? NW'(Cols) : NW'(nx_q.cout);
      c_pt_q    <= '0;
      c_ci_q    <= '0;
      c_kx_q    <= '0;
      c_ky_q    <= '0;
      c_kyoff_q <= '0;
      c_kxoff_q <= '0;
      c_widx_q  <= '0;
      c_done_q  <= 1'b0;
    end else if (fire) begin
      if (!tile_last) begin
        c_widx_q <= c_widx_q + 1'b1;
        if (!last_ci) begin
          c_ci_q <= c_ci_q + KW'(1);
        end else begin
          c_ci_q <= '0;
          if (!last_kx) begin
            c_kx_q    <= c_kx_q + 16'd1;
            c_kxoff_q <= c_kxoff_q + r_q.cstep;
          end else begin
            c_kx_q    <= '0;
            c_kxoff_q <= '0;
            c_ky_q    <= c_ky_q + 16'd1;
            c_kyoff_q <= c_kyoff_q + r_q.rowk;
          end
        end
      end else begin
        c_widx_q  <= '0;
        c_ci_q    <= '0;
        c_kx_q    <= '0;
        c_ky_q    <= '0;
        c_kxoff_q <= '0;
        c_kyoff_q <= '0;
        sh_n_q    <= c_cg_q;
        sh_rows_q <= r_q.pe ? (RowW + 1)'(n_act) : (RowW + 1)'(1);
        // the drain's view of the layer, so the next layer may start before this tile drains
        sh_lend_q <= last_pt && last_ct;
        sh_pe_q   <= r_q.pe;
        sh_rq_q   <= r_q.rq;
        sh_act_q  <= r_q.act;
        sh_q6_q   <= r_q.q6;
        sh_m_q    <= r_q.m;
        sh_s_q    <= r_q.s;
        if (last_pt) begin
          c_pt_q <= '0;
          if (last_ct) begin
            c_done_q <= 1'b1;
          end else begin
            c_j_q   <= c_j_q + JW'(1);
            c_co0_q <= c_co0_q + CoW'(Cols);
            c_cg_q  <= (32'(r_q.cout) - 32'(c_co0_q) - 32'(Cols) > 32'(Cols)) ? NW'(Cols) :
                       NW'(32'(r_q.cout) - 32'(c_co0_q) - 32'(Cols));
          end
        end else begin
          c_pt_q <= c_pt_q + PW'(1);
        end
      end
    end
  end


  // lanes advance when a tile's last step issues; the shadow keeps the finished tile's addresses
  always_ff @(posedge clk_i) begin
    for (int r = 0; r < Rows; r++) begin
      if (init_lanes_q || (fire && tile_last)) begin
        l_ox[r]      <= n_ox[r];
        l_iy0[r]     <= n_iy0[r];
        l_ix0[r]     <= n_ix0[r];
        l_pbase[r]   <= n_pbase[r];
        l_rowbase[r] <= n_rowbase[r];
        l_out[r]     <= n_out[r];
        l_p[r]       <= n_p[r];
      end
      if (fire && tile_last) sh_addr_q[r] <= r_q.out + l_out[r] + AW'(c_co0_q);
    end
  end

  // ======================= stage 1: MAC / vector step =======================
  logic s1_first_q, s1_pe_q, s1_dw_q;
  logic [1:0] s1_vmode_q;
  logic [15:0] s1_m_q, s1_mb_q;
  logic [7:0] s1_s_q, s1_sb_q;
  logic [NumIn-1:0] s1_mask_q;
  logic [15:0] s1_macs_q;
  logic [15:0] step_macs;
  assign step_macs = r_q.pe ? 16'(n_act) * 16'(c_cg_q) : 16'd0;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s1_valid_q <= 1'b0;
      s1_first_q <= 1'b0;
      s1_last_q  <= 1'b0;
      s1_pe_q    <= 1'b0;
      s1_dw_q    <= 1'b0;
      s1_vmode_q <= '0;
      s1_m_q     <= '0;
      s1_s_q     <= '0;
      s1_mb_q    <= '0;
      s1_sb_q    <= '0;
      s1_mask_q  <= '0;
      s1_macs_q  <= '0;
    end else begin
      s1_valid_q <= fire;
      s1_first_q <= tap0;
      s1_last_q  <= tile_last;
      s1_pe_q    <= r_q.pe;
      s1_dw_q    <= r_q.dw;
      s1_vmode_q <= r_q.vmode;
      s1_m_q     <= r_q.m;
      s1_s_q     <= r_q.s;
      s1_mb_q    <= r_q.mb;
      s1_sb_q    <= r_q.sb;
      s1_mask_q  <= mask;
      s1_macs_q  <= step_macs;
    end
  end

  logic [NumIn*8-1:0] x_masked;
  logic [Rows*Cols*8-1:0] x_pe;  // PE(r,c): lane r's byte (Conv/Fc) or its channel c (DwConv)
  always_comb begin
    for (int q = 0; q < NumIn; q++) begin
      x_masked[q*8 +: 8] = s1_mask_q[q] ? in_rdata[q*8 +: 8] : 8'd0;
    end
    for (int r = 0; r < Rows; r++) begin
      for (int c = 0; c < Cols; c++) begin
        x_pe[(r*Cols+c)*8 +: 8] = !s1_mask_q[r] ? 8'd0 :
                                  (s1_dw_q ? in_wide[(r*Cols+c)*8 +: 8] : in_rdata[r*8 +: 8]);
      end
    end
  end

  logic [RowW-1:0] dr_row_q;
  logic [Cols*32-1:0] pe_row, vec_res;

  nasa_pe_array #(
    .Rows(Rows),
    .Cols(Cols)
  ) u_pe (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .en_i     (s1_valid_q && s1_pe_q),
    .first_i  (s1_first_q),
    .last_i   (s1_last_q),
    .x_i      (x_pe),
    .w_i      (w_rdata),
    .rd_row_i (dr_row_q),
    .rd_data_o(pe_row)
  );

  nasa_vec_unit #(
    .Lanes(Cols)
  ) u_vec (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (s1_valid_q && !s1_pe_q),
    .mode_i (s1_vmode_q),
    .first_i(s1_first_q),
    .last_i (s1_last_q),
    .valid_i(s1_mask_q[Cols-1:0]),
    .x_i    (x_masked[Cols*8-1:0]),
    .m_i    (s1_m_q),
    .s_i    (s1_s_q),
    .mb_i   (s1_mb_q),
    .sb_i   (s1_sb_q),
    .res_o  (vec_res)
  );

  // ======================= drain: shadow -> requant -> output writer =======================
  // A finished tile's rows (one output position's channels each) go through RqLanes requant
  // lanes: a row of n results takes ceil(n / RqLanes) phases; the first phases' bytes wait in
  // rq_part_q and the row goes to the writer in its last phase.
  localparam int unsigned NPh  = Cols / RqLanes;
  localparam int unsigned PhW  = (NPh > 1) ? $clog2(NPh) : 1;
  localparam int unsigned RqLW = (RqLanes > 1) ? $clog2(RqLanes) : 0;
  logic [Cols*64-1:0] prm_sh_q;
  logic row_valid, row_ready;
  logic [Cols*8-1:0] row_data;
  logic [Cols*32-1:0] row_vals;
  logic [PhW-1:0] rq_ph_q;
  logic rq_ph_last;

  assign rq_ph_last = (NPh == 1) || (((NW + 1)'(rq_ph_q) + (NW + 1)'(1)) << RqLW >= (NW + 1)'(sh_n_q));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      shadow_full_q <= 1'b0;
      dr_row_q      <= '0;
      rq_ph_q       <= '0;
    end else if (stop) begin
      shadow_full_q <= 1'b0;
      dr_row_q      <= '0;
      rq_ph_q       <= '0;
    end else begin
      if (s1_valid_q && s1_last_q) shadow_full_q <= 1'b1;
      if (shadow_full_q && !rq_ph_last) rq_ph_q <= rq_ph_q + 1'b1;
      if (row_valid && row_ready) begin
        rq_ph_q <= '0;
        if ((RowW + 1)'(dr_row_q) + 1'b1 == sh_rows_q) begin
          shadow_full_q <= 1'b0;
          dr_row_q      <= '0;
        end else begin
          dr_row_q <= dr_row_q + 1'b1;
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (fire && tile_last) prm_sh_q <= prm_cur;
  end

  assign row_valid = shadow_full_q && !stop && rq_ph_last;
  assign row_vals  = sh_pe_q ? pe_row : vec_res;

  logic [RqLanes*8-1:0] rq_y;
  for (genvar j = 0; j < RqLanes; j++) begin : g_rq
    logic [63:0] rec;
    logic [31:0] val;
    if (NPh == 1) begin : g_direct
      assign rec = prm_sh_q[j*64 +: 64];
      assign val = row_vals[j*32 +: 32];
    end else begin : g_phase
      assign rec = prm_sh_q[(32'(rq_ph_q) * RqLanes + j)*64 +: 64];
      assign val = row_vals[(32'(rq_ph_q) * RqLanes + j)*32 +: 32];
    end
    logic unused_rec;
    assign unused_rec = ^rec[63:56];  // reserved byte of the record
    nasa_requant u_rq (
      .bypass_i(sh_rq_q == RqBypass),
      .val_i   (val),
      .bias_i  ((sh_rq_q == RqChan) ? rec[31:0] : 32'd0),
      .m_i     ((sh_rq_q == RqChan) ? rec[47:32] : sh_m_q),
      .s_i     ((sh_rq_q == RqChan) ? rec[55:48] : sh_s_q),
      .act_i   (sh_act_q),
      .q6_i    (sh_q6_q),
      .y_o     (rq_y[j*8 +: 8])
    );
  end
  if (NPh == 1) begin : g_row_direct
    assign row_data = rq_y;
  end else begin : g_row_phased
    logic [Cols*8-1:0] rq_part_q;
    always_ff @(posedge clk_i) begin
      if (shadow_full_q && !rq_ph_last) rq_part_q[32'(rq_ph_q)*RqLanes*8 +: RqLanes*8] <= rq_y;
    end
    always_comb begin
      row_data = rq_part_q;
      row_data[32'(rq_ph_q)*RqLanes*8 +: RqLanes*8] = rq_y;
    end
  end

  // the last row of a layer's last tile: the writer reports when it is written (ly_end)
  logic row_lend;
  assign row_lend = sh_lend_q && ((RowW + 1)'(dr_row_q) + 1'b1 == sh_rows_q);
  nasa_out_writer #(
    .Cols    (Cols),
    .MemBytes(MemBytes),
    .AddrBits(AW)
  ) u_out (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (state_q == StAbort),
    .row_valid_i(row_valid),
    .row_ready_o(row_ready),
    .row_addr_i (sh_addr_q[dr_row_q]),
    .row_n_i    (sh_n_q),
    .row_data_i (row_data),
    .row_last_i (row_lend),
    .last_o     (ly_end),
    .wr_valid_o (wr_valid),
    .wr_ready_i (wr_ready),
    .wr_addr_o  (wr_addr),
    .wr_data_o  (wr_data),
    .wr_strb_o  (wr_strb)
  );

  // Bits the datapath never needs: the unused descriptor words, tag/address bits beyond the
  // buffers, and the lane fields the watermark does not read.
  logic unused_misc;
  assign unused_misc = ^{desc_q[511:312], 64'(hc_addr) >> AW, hc_len[DW-1:AW+1],
                         o_bank[6:ColW], o_addr[31:IAW], o_addr[31:WAW], unused_a};

  // the loaders are done with the newest started layer: every one of its loads is issued
  assign ld_free = il_done_q && (!tl_pe_q || (tl_j_q == tl_nct_q));

  // ======================= performance counters =======================
  always_comb begin
    cnt_inc = '0;
    cnt_inc[nasa_pkg::CntCycles*16 +: 16]      = 16'(busy_o);
    cnt_inc[nasa_pkg::CntPeBusy*16 +: 16]      = 16'(s1_valid_q && s1_pe_q);
    cnt_inc[nasa_pkg::CntVecBusy*16 +: 16]     = 16'(s1_valid_q && !s1_pe_q);
    cnt_inc[nasa_pkg::CntMacs*16 +: 16]        = s1_valid_q ? s1_macs_q : 16'd0;
    cnt_inc[nasa_pkg::CntDramRdBytes*16 +: 16] = (ev_rd_beat || ext_rd_beat_i) ? 16'(MemBytes) : 16'd0;
    cnt_inc[nasa_pkg::CntDramWrBytes*16 +: 16] = ev_wr ? 16'(ev_wr_bytes) : (ext_wr_i ? 16'd1 : 16'd0);
    cnt_inc[nasa_pkg::CntStallWeight*16 +: 16] = 16'(want && !w_ok);
    cnt_inc[nasa_pkg::CntStallInput*16 +: 16]  = 16'(want && w_ok && !in_ok);
    cnt_inc[nasa_pkg::CntStallOutput*16 +: 16] = 16'(want && w_ok && in_ok && !sh_ok);
    cnt_inc[nasa_pkg::CntStallDesc*16 +: 16]   =
        16'(!a_v_q && (state_q == StFetch || state_q == StFetchWait || state_q == StDecode));
  end
endmodule
