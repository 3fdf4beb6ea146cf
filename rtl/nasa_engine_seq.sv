// Engine unit: the layer sequencer. Three stages work on consecutive layers of a program: the
// front end (state_q: fetch, decode) on layer q.fe_li, the loaders on the newest started layer,
// the issue stage on slot A (q.a_v, the layer register lay_o) while slot B (q.b_v, nx_q) holds the
// next, loading; finished tiles drain meanwhile. A decoded layer starts loading (ld_start_o, into
// B) once the loaders are done with the layer before (ld_free_i), B is free, its input fits the
// input buffer beside the computing layer's, and it reads nothing an unfinished layer writes; it
// starts computing (cs_start_o: B moves to A) when A is done. A layer is complete when the writer
// has written its last row (ly_end_i). Errors of a later layer are reported only once every layer
// before it is complete. Batch runs (ext mode) stream the scheduler's descriptors the same way;
// a template the engine ran packed (Images > 1) covers the scheduler's next offers of it, one per
// further image: those are taken without a fetch (cov_take_o).
`include "nasa_regs.svh"

module nasa_engine_seq #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          AddrBits = Cfg.addr_bits
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  // CSRs
  input  logic                    start_i,        // start requested while idle
  input  logic                    batch_i,        // with start_i: a batch run (ext mode)
  input  logic [31:0]             desc_addr_i,
  input  logic [31:0]             desc_count_i,
  input  logic [31:0]             win_base_i,
  input  logic [31:0]             win_limit_i,
  input  logic [31:0]             scratch_base_i,  // the scratch window (aligned; 0: none)
  output logic                    busy_o,
  output logic                    finish_o,       // pulse: the run ended (err_o, err_index_o)
  output logic [7:0]              err_o,
  output logic [31:0]             err_index_o,
  output logic [31:0]             layers_done_o,
  // ext mode: descriptors from the scheduler
  input  logic                    xd_valid_i,
  input  logic [31:0]             xd_tpl_i,
  input  logic [31:0]             xd_x_i,
  input  logic [31:0]             xd_y_i,
  input  logic [31:0]             xd_l_i,
  input  logic [31:0]             xd_s_i,
  input  logic [7:0]              xd_n_i,         // images left in the mini-batch (from this)
  input  logic                    xd_end_i,
  input  logic [7:0]              xd_err_i,
  input  logic [31:0]             xd_err_index_i,
  output logic                    ext_o,          // the run is a batch run
  output logic [31:0]             xq_x_o,         // the descriptor's X / Y / L (PATCH)
  output logic [31:0]             xq_y_o,
  output logic [31:0]             xq_l_o,
  output logic [31:0]             xq_s_o,
  output logic [7:0]              xq_n_o,
  output logic                    cov_take_o,     // an offer covered by the last packed layer
  // descriptor fetch: the read job (granted by job_ready_i) and the arrival of its bytes
  output logic                    desc_valid_o,
  output logic [AddrBits-1:0]     desc_src_o,
  input  logic                    job_ready_i,
  input  logic                    desc_arrived_i,
  input  logic                    dma_idle_i,
  output logic                    fetch_o,        // StFetch
  // decode
  output logic                    dec_start_o,    // the descriptor arrived: decode starts
  output logic                    decoding_o,     // StDecode
  input  logic                    dec_last_i,
  input  logic [7:0]              dec_err_i,
  input  logic [1:0]              dec_hz_i,
  input  nasa_engine_pkg::layer_t dec_layer_i,
  input  logic [7:0]              dec_imgs_i,     // its images (packed; 1 when not)
  output logic                    li_par_o,       // parity of the decoding layer's index
  // back end
  input  logic                    ld_free_i,      // the loaders are done with the newest layer
  input  logic                    c_done_i,       // the issue stage issued A's last step
  input  logic [nasa_engine_pkg::LyOw-1:0] a_loaded_i,  // input bytes arrived of layer A
  input  logic                    quant_err_i,    // a bad per-channel record in layer A
  input  logic                    ly_end_i,       // a layer's last row is written
  input  logic                    dr_lend_i,      // a layer's last row left the drain
  output logic                    ld_start_o,
  output logic                    cs_start_o,
  output logic                    run_start_o,    // a run starts (state idle)
  output logic                    stop_o,         // abort: the units stop, the DMA drains
  output logic                    a_v_o,
  output logic                    ld_par_o,       // parity of the newest started layer
  output logic [$clog2(InBufBytes)-1:0] ld_ib_o,  // its place in the input buffer
  output logic                    desc_stall_o,   // (counter) A empty, the front end busy
  output nasa_engine_pkg::layer_t lay_o,          // layer A
  output logic [15:0]             nx_cout_o       // layer B's Cout
);
  localparam int unsigned IAW = $clog2(InBufBytes);
  localparam int unsigned AW  = AddrBits;
  localparam int unsigned KW  = $clog2(KredMax + 1);
  localparam int unsigned OW  = $clog2((2 * Rows + 16) * InBufBytes) + 1;
  localparam int unsigned DW0 = (AW + 2 > IAW + 2) ? AW + 2 : IAW + 2;
  localparam int unsigned DW  = (DW0 > KW + 1) ? DW0 : KW + 1;
  localparam int unsigned LIAW = nasa_engine_pkg::LyIaw;

  // the registers (reset: all zero)
  typedef struct packed {
    logic [31:0]    fe_li;                       // descriptor the front end fetches / decodes
    logic           a_v;
    logic           b_v;
    logic [2:0]     pend;                        // layers started (ld_start) and not complete
    logic           ld_par;                      // parity of the newest started layer
    logic [IAW-1:0] ld_ib;                       // its place in the input buffer
    logic [IAW-1:0] ld_in_end;                   // and its extent (modulo the buffer)
    // a folded residual's layer that left A (its last step issued) while its last tile still
    // drains, reading its residual: its buffer region stays reserved until its last row leaves
    // the drain (at most one such layer: the next one's last step waits for an empty drain)
    logic           res_v;
    logic [OW-1:0]  res_end;                     // its extent
    logic           ext;
    logic [31:0]    xq_x;
    logic [31:0]    xq_y;
    logic [31:0]    xq_l;
    logic [31:0]    xq_s;
    logic [7:0]     xq_n;
    logic [31:0]    xq_tpl;
    // ext mode: the template of the last packed layer started and the offers of it still to
    // take without a fetch (its further images)
    logic [31:0]    cov_tpl;
    logic [7:0]     cov_left;
    logic [7:0]     err;
    logic [31:0]    err_index;
    logic [31:0]    layers_done;
    logic           finish;
  } regs_t;
  regs_t q, d;
  nasa_engine_pkg::fe_state_e state_q, state_d;  // (a typed enum: outside the struct for Yosys 0.23)
  nasa_engine_pkg::layer_t r_q, nx_q;

  logic [31:0] desc_src;
  logic desc_in_win, desc_in_mem, desc_in_sc, be_idle, a_fin, dec_ok, in_room, hz_ok, ld_start, cs_start, cov_take;
  assign desc_src    = q.ext ? xd_tpl_i : desc_addr_i + (q.fe_li << 6);
  // the next descriptor lies inside the window
  nasa_engine_win_check #(
    .AddrBits(AddrBits),
    .LenW    (DW)
  ) u_desc_win (
    .addr_i  (desc_src),
    .len_i   (DW'(nasa_pkg::DescBytes)),
    .base_i  (win_base_i),
    .limit_i (win_limit_i),
    .inside_o(desc_in_mem)
  );
  // ... and not in the on-chip scratch's window
  nasa_engine_sc_check #(
    .Bytes(Cfg.scratch_bytes),
    .LenW (DW)
  ) u_desc_sc (
    .addr_i   (desc_src),
    .len_i    (DW'(nasa_pkg::DescBytes)),
    .base_i   (scratch_base_i),
    .overlap_o(desc_in_sc),
    .inside_o ()
  );
  assign desc_in_win = desc_in_mem && !desc_in_sc;
  assign cov_take     = (state_q == nasa_engine_pkg::StFetch) && q.ext && xd_valid_i &&
                        !xd_end_i && q.cov_left != '0 && xd_tpl_i == q.cov_tpl;
  assign desc_valid_o = (state_q == nasa_engine_pkg::StFetch) && desc_in_win &&
                        (!q.ext || (xd_valid_i && !xd_end_i)) && !cov_take;
  assign desc_src_o   = AW'(desc_src);

  assign be_idle  = (q.pend == '0);
  assign a_fin    = q.a_v && c_done_i && (OW'(a_loaded_i) == OW'(r_q.in_end));
  assign dec_ok   = dec_last_i && (dec_err_i == nasa_pkg::ErrNone);
  // (room beside layer A's input and a reserved residual region: the buffer is a ring)
  assign in_room  = (q.a_v ? (OW + 2)'(OW'(r_q.in_end)) : '0) +
                    (q.res_v ? (OW + 2)'(q.res_end) : '0) +
                    (OW + 2)'(OW'(dec_layer_i.in_end)) <= (OW + 2)'(InBufBytes);
  assign hz_ok    = (q.pend <= 3'd2) && !(dec_hz_i[0] && q.pend >= 3'd1) &&
                    !(dec_hz_i[1] && q.pend >= 3'd2);
  assign ld_start = dec_ok && !q.b_v && ld_free_i && in_room && hz_ok;
  assign cs_start = q.b_v && (!q.a_v || a_fin);

  always_comb begin
    d = q;
    state_d = state_q;
    d.finish      = 1'b0;
    unique case (state_q)
      nasa_engine_pkg::StIdle: begin
        if (start_i) begin
          d.fe_li       = '0;
          d.a_v         = 1'b0;
          d.b_v         = 1'b0;
          d.pend        = '0;
          d.ld_par      = 1'b0;
          d.ld_ib       = '0;
          d.ld_in_end   = '0;
          d.res_v       = 1'b0;
          d.cov_left    = '0;
          d.layers_done = '0;
          d.err         = nasa_pkg::ErrNone;
          d.err_index   = '0;
          d.ext         = batch_i;
          if (batch_i) begin
            state_d = nasa_engine_pkg::StFetch;
          end else if (desc_count_i == '0) begin
            d.err    = nasa_pkg::ErrEmptyProgram;
            d.finish = 1'b1;
          end else begin
            state_d = nasa_engine_pkg::StFetch;
          end
        end
      end
      nasa_engine_pkg::StFetch: begin
        if (q.ext && xd_end_i) begin
          // the end of the batch run, after every layer it issued is complete (the scheduler
          // ends only then; an error of the control units comes while none runs)
          if (be_idle && dma_idle_i) begin
            d.err       = xd_err_i;
            d.err_index = xd_err_index_i;
            if (xd_err_i != nasa_pkg::ErrNone) begin
              state_d = nasa_engine_pkg::StAbort;
            end else begin
              state_d  = nasa_engine_pkg::StIdle;
              d.finish = 1'b1;
            end
          end
        end else if (q.ext && !xd_valid_i) begin
          state_d = nasa_engine_pkg::StFetch;
        end else if (cov_take) begin
          d.cov_left = q.cov_left - 8'd1;
        end else if (!desc_in_win) begin
          if (be_idle) begin  // the layers before it complete first
            d.err       = nasa_pkg::ErrWindow;
            d.err_index = q.fe_li;
            state_d     = nasa_engine_pkg::StAbort;
          end
        end else if (job_ready_i) begin
          state_d = nasa_engine_pkg::StFetchWait;
          d.xq_x  = xd_x_i;
          d.xq_y  = xd_y_i;
          d.xq_l  = xd_l_i;
          d.xq_s  = xd_s_i;
          d.xq_n  = xd_n_i;
          d.xq_tpl = xd_tpl_i;
        end
      end
      nasa_engine_pkg::StFetchWait: begin
        if (desc_arrived_i) state_d = nasa_engine_pkg::StDecode;
      end
      nasa_engine_pkg::StDecode: begin
        if (!dec_last_i) begin
          state_d = nasa_engine_pkg::StDecode;  // (the decode steps count in nasa_engine_decode)
        end else if (dec_err_i != nasa_pkg::ErrNone) begin
          if (be_idle) begin
            d.err       = dec_err_i;
            d.err_index = q.fe_li;
            state_d     = nasa_engine_pkg::StAbort;
          end
        end else if (ld_start) begin
          d.fe_li = q.fe_li + 1;
          state_d = (q.ext || q.fe_li + 1 != desc_count_i) ? nasa_engine_pkg::StFetch :
                                                             nasa_engine_pkg::StRun;
        end
      end
      nasa_engine_pkg::StRun: begin
        // every descriptor of the program started: wait for completion
        if (be_idle && dma_idle_i) begin
          state_d  = nasa_engine_pkg::StIdle;
          d.finish = 1'b1;
        end
      end
      nasa_engine_pkg::StAbort: begin
        if (dma_idle_i) begin
          state_d  = nasa_engine_pkg::StIdle;
          d.finish = 1'b1;
        end
      end
      default: state_d = nasa_engine_pkg::StIdle;
    endcase
    // the back end
    if (ld_start) begin
      d.b_v       = 1'b1;
      d.ld_par    = !q.ld_par;
      d.ld_ib     = q.ld_ib + q.ld_in_end;
      d.ld_in_end = IAW'(dec_layer_i.in_end);
      if (q.ext) begin
        d.cov_tpl  = q.xq_tpl;
        d.cov_left = dec_imgs_i - 8'd1;
      end
    end
    if (cs_start) begin
      d.a_v = 1'b1;
      if (!ld_start) d.b_v = 1'b0;
    end else if (a_fin) begin
      d.a_v = 1'b0;
    end
    if (a_fin && r_q.res) begin
      d.res_v   = 1'b1;
      d.res_end = OW'(r_q.in_end);
    end else if (dr_lend_i) begin
      d.res_v = 1'b0;
    end
    d.pend = q.pend + 3'(ld_start) - 3'(ly_end_i);
    if (ly_end_i) d.layers_done = q.layers_done + 1;
    if (quant_err_i) begin
      d.err       = nasa_pkg::ErrBadQuant;
      d.err_index = r_q.idx;
      state_d     = nasa_engine_pkg::StAbort;
    end
    if (quant_err_i || state_q == nasa_engine_pkg::StAbort) begin
      d.a_v   = 1'b0;
      d.b_v   = 1'b0;
      d.res_v = 1'b0;
    end
  end

  `NASA_FF(q, d, '0)
  `NASA_FF(state_q, state_d, nasa_engine_pkg::StIdle)

  // the layer registers: the next bank (B) takes the decoded layer at ld_start, A takes B at
  // cs_start
  always_ff @(posedge clk_i) begin
    if (ld_start) begin
      nx_q     <= dec_layer_i;
      nx_q.ib  <= LIAW'(d.ld_ib);
      nx_q.par <= !q.ld_par;
      nx_q.idx <= q.fe_li;
    end
    if (cs_start) r_q <= nx_q;
  end

  assign busy_o        = (state_q != nasa_engine_pkg::StIdle);
  assign finish_o      = q.finish;
  assign err_o         = q.err;
  assign err_index_o   = q.err_index;
  assign layers_done_o = q.layers_done;
  assign ext_o         = q.ext;
  assign xq_x_o        = q.xq_x;
  assign xq_y_o        = q.xq_y;
  assign xq_l_o        = q.xq_l;
  assign xq_s_o        = q.xq_s;
  assign xq_n_o        = q.xq_n;
  assign cov_take_o    = cov_take;
  assign fetch_o       = (state_q == nasa_engine_pkg::StFetch);
  assign dec_start_o   = (state_q == nasa_engine_pkg::StFetchWait) && desc_arrived_i;
  assign decoding_o    = (state_q == nasa_engine_pkg::StDecode);
  assign li_par_o      = q.fe_li[0];
  assign ld_start_o    = ld_start;
  assign cs_start_o    = cs_start;
  assign run_start_o   = start_i && (state_q == nasa_engine_pkg::StIdle);
  assign stop_o        = (state_q == nasa_engine_pkg::StAbort);
  assign a_v_o         = q.a_v;
  assign ld_par_o      = q.ld_par;
  assign ld_ib_o       = q.ld_ib;
  assign desc_stall_o  = !q.a_v && (state_q == nasa_engine_pkg::StFetch ||
                                    state_q == nasa_engine_pkg::StFetchWait ||
                                    state_q == nasa_engine_pkg::StDecode);
  assign lay_o         = r_q;
  assign nx_cout_o     = nx_q.cout;

  // the high bits of the arrival counter (see nasa_engine_pkg) and the window's beyond AddrBits
  logic unused_loaded;
  assign unused_loaded = ^{a_loaded_i, win_base_i, win_limit_i};

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   state_q == nasa_engine_pkg::StIdle || state_q == nasa_engine_pkg::StFetch ||
                   state_q == nasa_engine_pkg::StFetchWait ||
                   state_q == nasa_engine_pkg::StDecode || state_q == nasa_engine_pkg::StRun ||
                   state_q == nasa_engine_pkg::StAbort)
    else $error("sequencer state is not a legal state");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({state_q, ld_start, cs_start, q.finish, busy_o, q.a_v, q.b_v}))
    else $error("X on sequencer control");
  // the descriptor job holds until the DMA takes it (program runs: nothing withdraws it)
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (desc_valid_o && !job_ready_i && !q.ext && !quant_err_i) |=>
                   (desc_valid_o && $stable(desc_src_o)))
    else $error("descriptor job withdrawn or changed while stalled");
  // at most two layers ahead of the writer (slots A and B, plus one draining)
  assert property (@(posedge clk_i) disable iff (!rst_ni) q.pend <= 3'd3)
    else $error("more layers in flight than the slots hold");
`endif
endmodule
