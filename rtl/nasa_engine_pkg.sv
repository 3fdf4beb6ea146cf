// Engine-internal types: the states of the engine's units and the packed structs its units pass
// to each other (docs/engine.md "RTL units"). Not part of the hardware/software contract (that is
// nasa_pkg, generated from hw_spec.h).
//
// A package cannot see a module's parameters, so the structs' widths are the largest any hardware
// configuration of hw_spec.h needs (like nasa_pkg's capacities): each unit computes in its own
// configuration's widths, zero-extends into a field and truncates back when it reads one, so the
// unused high bits carry no logic. Every unit checks its widths against these in simulation.
package nasa_engine_pkg;

  // Widest configuration (`large`: Rows = Cols = 32, InBufBytes = 2^17, KredMax = 8192).
  localparam int unsigned LyAw  = 32;  // memory addresses (AddrBits)
  localparam int unsigned LyIaw = 17;  // input-buffer byte addresses: $clog2(InBufBytes)
  // signed input-buffer offsets: $clog2((2 * Rows + 16) * InBufBytes) + 1
  localparam int unsigned LyOw  = 25;
  localparam int unsigned LyKw  = 14;  // reduction steps: $clog2(KredMax + 1)
  localparam int unsigned LyPw  = 19;  // output positions: $clog2(InBufBytes + Rows + 1) + 1
  localparam int unsigned LyJw  = 17;  // channel tiles
  localparam int unsigned LyCw  = 18;  // signed window-corner coordinates
  localparam int unsigned LyWrw = 14;  // weight-ring byte addresses: $clog2(2 * KredMax)
  localparam int unsigned LyRw  = 6;   // drained rows of a tile: $clog2(Rows) + 1
  localparam int unsigned LyNw  = 6;   // results of a row: $clog2(Cols + 1)
  localparam int unsigned LyBw  = 17;  // DMA tag base: the larger buffer's byte addresses

  // The DMA's job tag {base, bank[7:0], flag, dst[2:0]} (nasa_engine_dma_front): base is an
  // input-buffer byte offset, a weight-ring byte address or a record slot, so as wide as the
  // larger buffer's addresses (iaw, wrw bits), and at least 6 bits.
  function automatic int unsigned dma_tag_w(int unsigned iaw, int unsigned wrw);
    dma_tag_w = ((iaw > wrw) ? ((iaw > 6) ? iaw : 6) : ((wrw > 6) ? wrw : 6)) + 12;
  endfunction
  // The largest DMA job in bytes: a descriptor (64), an input chunk (chunk bytes) or a tile's
  // per-channel records (8 bytes a column).
  function automatic int unsigned dma_max_job(int unsigned chunk, int unsigned cols);
    dma_max_job = (chunk > cols * 8) ? ((chunk > 64) ? chunk : 64) :
                                       ((cols * 8 > 64) ? cols * 8 : 64);
  endfunction

  // requant(x, M, S) = (x*M + 2^(S-1)) >>> S of an int8 x (a residual add's term: the vector
  // unit's Add, a folded residual in the drain): |x*M| < 2^23, so for S >= 27 the rounding term
  // alone exceeds it and the result is 0, and below that 27 bits hold the sum exactly (S is in
  // [1, 47], validated at decode, so S < 27 fits 5 shifter bits).
  function automatic logic [31:0] rq8(logic [7:0] x, logic [15:0] m, logic [7:0] s);
    logic signed [24:0] xm;
    logic signed [26:0] rsum, rsh;
    xm   = $signed(x) * $signed({1'b0, m});
    rsum = 27'(xm) + ((s[4:0] == 5'd0) ? 27'sd0 : (27'sd1 <<< (s[4:0] - 5'd1)));
    rsh  = rsum >>> s[4:0];
    rq8  = (s > 8'd26) ? 32'd0 : 32'(rsh);
  endfunction

  // Front end (sequencer) states: fetch and decode one descriptor at a time.
  typedef enum logic [2:0] {
    StIdle      = 3'd0,
    StFetch     = 3'd1,  // issue the descriptor's read job (ext mode: wait for a descriptor)
    StFetchWait = 3'd2,  // its 64 bytes arrive
    StDecode    = 3'd3,  // the decode micro-sequence (DecodeSteps cycles), then wait to start
    StRun       = 3'd4,  // every descriptor started: wait for the layers to complete
    StAbort     = 3'd5   // an error: wait for the DMA to drain, then finish
  } fe_state_e;

  // Decode micro-sequence steps (nasa_pkg::DecodeSteps of them): the product each step's
  // multiply produces (and the checks that run in it, see nasa_engine_decode).
  typedef enum logic [3:0] {
    DecHwIn    = 4'd0,   // H*W
    DecHwOut   = 4'd1,   // Ho*Wo
    DecInBytes = 4'd2,   // H*W*Cin: input bytes
    DecInSpan  = 4'd3,   // (Images-1)*InStride: the packed inputs' span before the last
    DecOutB    = 4'd4,   // Ho*Wo*Cout: output bytes (and a folded residual's)
    DecOutSpan = 4'd5,   // (Images-1)*OutStride
    DecRowB    = 4'd6,   // W*Cin: input row bytes
    DecKred    = 4'd7,   // k*k*Cin (Fc: H*W*Cin): reduction length
    DecWgtB    = 4'd8,   // weight bytes
    DecWrap    = 4'd9,   // (Wo-1)*stride*Cin: a row's last window step
    DecVBytes  = 4'd10,  // Ho*Wo*cpad: gathered input bytes
    DecPadRow  = 4'd11,  // row bytes * pad
    DecPadCin  = 4'd12,  // pad * Cin
    DecPackIn  = 4'd13,  // (Images-1)*align(input bytes): the last image's place in the buffer
    DecPackP   = 4'd14,  // Images*Ho*Wo (Fc: Images): output positions
    DecGRow    = 4'd15   // Wo*cpad: gathered row bytes (held until the layer starts)
  } dec_step_e;

  // Tile loader phases.
  typedef enum logic [1:0] {
    TlAlloc = 2'd0,  // allocate the next channel tile in the weight ring (or evict the oldest)
    TlPrm   = 2'd1,  // issue its per-channel record job
    TlWgt   = 2'd2   // issue its weight jobs
  } tl_phase_e;

  // Requant source of a layer's results.
  typedef enum logic [1:0] {
    RqChan   = 2'd0,  // per-channel records (Conv, DwConv, Fc)
    RqDesc   = 2'd1,  // the descriptor's M, S (AvgPool, Gap)
    RqBypass = 2'd2   // none (MaxPool; Add requants in the vector unit)
  } rq_mode_e;

  // Destination of a DMA read job (the low 3 bits of its tag).
  typedef enum logic [2:0] {
    DstDesc  = 3'd0,  // the descriptor register
    DstIn    = 3'd1,  // the input buffer
    DstWRow  = 3'd2,  // the weight ring, a Conv/Fc weight row segment into one bank
    DstWScat = 3'd3,  // the weight ring, a depthwise tap scattered over the banks
    DstPrm   = 3'd4,  // a record slot of the per-channel parameter memory
    DstWK2   = 3'd5,  // the weight ring, a K-split tile's row segment dealt over 2 bank groups
    DstWK4   = 3'd6   // ... over 4 bank groups
  } dst_e;

  // A weight-ring beat: a Conv/Fc row segment (dealt or not), or any weight beat. (The names
  // qualified: Yosys 0.23 does not resolve a package's enum names inside its functions.)
  function automatic logic dst_wrow(logic [2:0] dst);
    dst_wrow = dst == nasa_engine_pkg::DstWRow || dst == nasa_engine_pkg::DstWK2 ||
               dst == nasa_engine_pkg::DstWK4;
  endfunction
  function automatic logic dst_wgt(logic [2:0] dst);
    dst_wgt = dst_wrow(dst) || dst == nasa_engine_pkg::DstWScat;
  endfunction

  // On-chip scratch (docs/engine.md "On-chip scratch"): whether address a lies in the window at
  // base (CSR ScratchBase, aligned to the scratch's bytes; 0: no window) of a scratch of `bytes`
  // bytes (0: none).
  // The dual drain (docs/engine.md "Dual drain"; hw::Config::dual_drain): on a configuration
  // with a scratch whose requant lanes take a whole row, a PE tile without a folded residual
  // drains two rows a cycle and the writer stores two words a cycle into the scratch.
  function automatic logic dual_drain(int unsigned scratch_bytes, int unsigned rq_lanes,
                                      int unsigned cols, int unsigned rows);
    dual_drain = scratch_bytes != 0 && rq_lanes == cols && rows >= 2;
  endfunction

  function automatic logic in_scratch(logic [31:0] a, logic [31:0] base, int unsigned bytes);
    if (bytes == 0) in_scratch = 1'b0;
    else in_scratch = base != '0 && ((a ^ base) & ~(32'(bytes) - 32'd1)) == '0;
  endfunction

  // K-split (docs/engine.md "K-split tiles"): a Conv/Fc channel tile of cg <= Cols/f channels
  // runs its reduction in f = 2^ks column groups, group g taking the reduction bytes i with
  // i % f == g, so it takes 1/f of the steps; the drain adds the groups. f is at most
  // 2^nasa_pkg::KsLogMax (0, 1 or 2) and divides the layer's reduction steps per tap (its ksc:
  // the most it allows, set by nasa_engine_decode).
  // ks of a tile of cg channels in a layer allowing ksc, on Cols columns
  function automatic logic [1:0] ks_of(int unsigned cg, logic [1:0] ksc, int unsigned cols);
    ks_of = 2'd0;
    if (ksc >= 2'd1 && cg * 2 <= cols) ks_of = 2'd1;
    if (ksc >= 2'd2 && cg * 4 <= cols) ks_of = 2'd2;
  endfunction

  // A DMA read job as a loader requests it (the DMA front packs base, bank, flag and dst into
  // the job's tag and unpacks them from the responses).
  typedef struct packed {
    logic [LyAw-1:0] src;   // source address
    logic [31:0] len;       // bytes
    logic [LyBw-1:0] base;  // input-buffer byte offset, weight-ring address or record slot
    logic [7:0] bank;       // weight rows: {column end, row}
    logic flag;             // input: layer parity; weights: the tile's last job
    logic [2:0] dst;        // dst_e
  } job_t;

  // A decoded layer as the issue stage computes it (decode -> sequencer's next-layer bank ->
  // issue stage). Position 0's window corner is signed (dimensions are 16-bit).
  typedef struct packed {
    logic pe;         // the layer uses the PE array, weights and records
    logic wrow;       // Conv/Fc: weights in rows, loaded column by column
    logic dw;         // DwConv (on the PE array: lane r reads Cols channels of its pixel)
    logic bchk;       // sliding window: taps outside the image read zero
    logic add;        // residual add: two inputs
    logic res;        // a residual folded into the drain (Res): loaded first, the input at offr
    logic need_all;   // Fc, Gap: the whole input before the first step
    logic [1:0] vmode;  // nasa_pkg::vec_mode_e
    logic [1:0] rq;     // rq_mode_e
    logic [1:0] act;    // nasa_pkg::act_e (low bits)
    logic [7:0] q6, s, sb;
    logic [15:0] m, mb, kh, kw, wo, hi, wi, stride, cout, cin;
    logic [LyKw-1:0] cin_n;                // reduction steps per tap
    logic [1:0] ksc;                       // K-split: log2 of the largest f the layer allows
    logic [LyPw-1:0] p, npt;               // output positions, position tiles
    logic [LyJw-1:0] nct;                  // channel tiles
    logic [LyOw-1:0] cstep, rowk, stepx, stepwrap, srowb;
    logic [LyOw-1:0] offb, offr, in_total, in_end;
    logic [LyAw-1:0] out;                  // output address
    logic [LyIaw-1:0] ib;                  // the layer's place in the input buffer (a ring)
    logic par;                             // layer parity: which input-arrival counter
    logic [31:0] idx;                      // its descriptor index
    logic [LyCw-1:0] p0_iy, p0_ix;         // position 0: top-left window corner (signed;
                                           // a row band's top padding is its own),
    logic [LyOw-1:0] p0_pbase, p0_rowbase; // its input byte and row offsets
    // packed images (Images > 1): after an image's last output row (window corner row
    // last_iy) the lanes jump to the next image: input offsets by img_pb / img_rb, output by
    // img_out
    logic pack;
    logic [LyCw-1:0] last_iy;
    logic [LyOw-1:0] img_pb, img_rb;
    logic [LyAw-1:0] img_out;
  } layer_t;

  // What the input loader needs of a decoded layer (taken when it starts loading).
  typedef struct packed {
    logic g;                        // pixel gather
    logic add;                      // second input
    logic res;                      // a folded residual: first (nres bytes), the input at offb
    logic [7:0] imgs;               // packed images: segments of na bytes, offb apart
    logic [LyAw-1:0] istride;       // their sources' stride
    logic [15:0] cin, wo;
    logic [LyOw-1:0] na;            // bytes of the input
    logic [LyOw-1:0] nres;          // bytes of a folded residual
    logic [LyOw-1:0] cpad;          // gather: slot bytes per pixel
    logic [LyOw-1:0] offb;          // the second segment's offset in the buffer
    logic [LyAw-1:0] in, in2;       // input addresses
    logic [LyAw-1:0] gstep, grow;   // gather: source step per pixel and per row
  } il_cfg_t;

  // What the tile loader needs of a decoded layer.
  typedef struct packed {
    logic pe;                       // the layer has weights
    logic wrow;                     // Conv/Fc weights (rows) or depthwise (taps)
    logic [LyJw-1:0] nct;           // channel tiles
    logic [LyAw-1:0] wgt, prm;      // weight and record addresses
    logic [15:0] cout, cin, kk;
    logic [LyKw-1:0] kred;          // reduction length
    logic [LyWrw-1:0] tsz;          // ring bytes of one tile
    logic [1:0] ksc;                // K-split: log2 of the largest f the layer allows
  } tl_cfg_t;

  // One issued step for compute stage 1 (registered there every cycle).
  typedef struct packed {
    logic first;        // the tile's first reduction step
    logic last;         // its last
    logic pe;           // PE array (or the vector unit)
    logic dw;
    logic [1:0] ks;     // K-split: PE column c takes byte c / (Cols >> ks) of its lane's read
    logic [1:0] vmode;
    logic [15:0] m, mb;
    logic [7:0] s, sb;
    logic [15:0] macs;  // MACs of the step (counter)
  } step_t;

  // A finished tile's drain metadata (issue stage -> drain, when its last step issues).
  typedef struct packed {
    logic [LyRw-1:0] rows;  // rows (output positions) to drain
    logic [LyNw-1:0] n;     // results (channels) per row
    logic lend;             // the layer's last tile
    logic pe;               // PE array (or vector unit) results
    logic [1:0] ks;         // K-split: result j is the sum of columns g * (Cols >> ks) + j
    logic [1:0] rq;         // rq_mode_e
    logic [1:0] act;
    logic [7:0] q6, s;
    logic [15:0] m;
    logic res;                     // a folded residual: + requant(r, Mb, Sb) after (M, S)
    logic [7:0] sb;
    logic [15:0] mb;
    logic [LyIaw-1:0] rdelta;      // input-buffer address of a row's residual - its output's
  } shadow_t;

endpackage
