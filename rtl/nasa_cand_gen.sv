// Candidate generator (batch mode, docs/fusion.md "cand_gen"): writes count_i candidate vectors of
// num_layers_i bytes at out_addr_i + j * stride_i, each byte drawn with xorshift32 (mode 1),
// mutated from parent j mod P (mode 2) or crossed over from parents 2j and 2j+1 mod P (mode 3).
// Parents are read byte by byte on the control memory port, one read outstanding at a time; the
// parent indices are running counters that wrap at P (no divider). C++ model: nasa::cand_gen.
//
// The configuration inputs (mode_i .. parent_count_i, except seed_i and the two base addresses,
// which are taken at start) are read throughout the run: the top holds them (its CSRs ignore
// writes while busy).
//
// abort_i returns to idle in the cycle after it is seen and forgets any read in flight: the top
// aborts its control master too, so no response may arrive for a read accepted before the abort.
`include "nasa_regs.svh"

module nasa_cand_gen #(
  parameter int unsigned MaxLayers = nasa_pkg::MaxLayers
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   start_i,         // pulse while idle
  input  logic                   abort_i,         // back to idle at once (drops any request)
  output logic                   busy_o,
  output logic                   done_o,          // one-cycle pulse after the last byte's write
  input  logic [1:0]             mode_i,          // 1 sample, 2 mutate, 3 crossover, 0 none
  input  logic [31:0]            seed_i,          // 0 means 0x9E3779B9
  input  logic [16:0]            prob_i,          // mutation probability 0..65536
  input  logic [7:0]             num_layers_i,    // L, 1..MaxLayers
  input  logic [MaxLayers*8-1:0] layer_k_i,       // K of layer i at [i*8 +: 8]
  input  logic [31:0]            out_addr_i,
  input  logic [31:0]            stride_i,
  input  logic [31:0]            count_i,
  input  logic [31:0]            parent_addr_i,
  input  logic [31:0]            parent_count_i,  // P >= 1 in modes 2 and 3
  output nasa_pkg::byte_req_t mreq_o,
  input  nasa_pkg::byte_rsp_t mrsp_i
);
  localparam int unsigned IW = (MaxLayers > 1) ? $clog2(MaxLayers) : 1;
  localparam logic [31:0] SeedZero = 32'h9E37_79B9;
  localparam logic [1:0] ModeSample = 2'd1, ModeMutate = 2'd2, ModeCross = 2'd3;

  typedef enum logic [2:0] {
    StIdle,    // waiting for start_i
    StLayer,   // draw r = next(); sample (mode 1) or decide where the byte comes from
    StSample,  // mode 2, mutated layer: a second draw for sample(K)
    StRdReq,   // parent byte read request
    StRdWait,  // waiting for its response
    StWrite    // write the byte; advance layer / candidate
  } state_e;

  // xorshift32 step.
  function automatic logic [31:0] xs_next(input logic [31:0] x);
    logic [31:0] t;
    t = x ^ (x << 13);
    t = t ^ (t >> 17);
    xs_next = t ^ (t << 5);
  endfunction

  // sample(K) = (r * K) >> 32, a 32x8 multiply.
  function automatic logic [7:0] sample_k(input logic [31:0] r, input logic [7:0] k);
    sample_k = 8'((40'(r) * 40'(k)) >> 32);
  endfunction

  // Next parent (index, base address) with the index wrapping at P: {idx, base}.
  function automatic logic [63:0] par_inc(input logic [31:0] idx, input logic [31:0] base,
                                          input logic [31:0] pcount, input logic [31:0] paddr,
                                          input logic [31:0] stride);
    if (idx + 32'd1 == pcount) par_inc = {32'd0, paddr};
    else par_inc = {idx + 32'd1, base + stride};
  endfunction

  // the registers (reset: all zero)
  typedef struct packed {
    state_e      state;
    logic [31:0] x;                              // PRNG state
    logic [31:0] j;                              // candidate
    logic [7:0]  i;                              // layer
    logic [31:0] cbase;                          // out_addr + j * stride
    logic [31:0] pa;                             // parents (mode 2: p = pa; 3: a, b)
    logic [31:0] pb;
    logic [31:0] pa_base;                        // their vector addresses
    logic [31:0] pb_base;
    logic        sel_b;                          // read parent b (mode 3, r >> 31)
    logic [7:0]  c;                              // the byte to write
    logic        done;
  } regs_t;
  regs_t q, d;

  logic [31:0] r;
  logic [7:0] k_cur;
  logic [63:0] inc_a, inc_b, inc_b2;
  logic last_layer, last_cand;

  assign r          = xs_next(q.x);
  assign k_cur      = layer_k_i[q.i[IW-1:0]*8 +: 8];
  assign last_layer = (q.i + 8'd1 == num_layers_i);
  assign last_cand  = (q.j + 32'd1 == count_i);
  // Mode 2: p <- p + 1. Mode 3: a <- b + 1, b <- b + 2 (so a = 2j mod P, b = (2j + 1) mod P).
  assign inc_a      = par_inc(q.pa, q.pa_base, parent_count_i, parent_addr_i, stride_i);
  assign inc_b      = par_inc(q.pb, q.pb_base, parent_count_i, parent_addr_i, stride_i);
  assign inc_b2     = par_inc(inc_b[63:32], inc_b[31:0], parent_count_i, parent_addr_i, stride_i);

  always_comb begin
    d = q;
    d.done    = 1'b0;

    mreq_o.valid = 1'b0;
    mreq_o.we    = 1'b0;
    mreq_o.addr  = (q.sel_b ? q.pb_base : q.pa_base) + 32'(q.i);
    mreq_o.wdata = q.c;

    unique case (q.state)
      StIdle: begin
        if (start_i) begin
          d.x       = (seed_i == 32'd0) ? SeedZero : seed_i;
          d.j       = '0;
          d.i       = '0;
          d.cbase   = out_addr_i;
          d.sel_b   = 1'b0;
          d.pa      = '0;
          d.pa_base = parent_addr_i;
          if (parent_count_i == 32'd1) begin
            d.pb      = '0;
            d.pb_base = parent_addr_i;
          end else begin
            d.pb      = 32'd1;
            d.pb_base = parent_addr_i + stride_i;
          end
          // Nothing to write: done at once (the top rejects L = 0 and count = 0 anyway).
          if (mode_i == 2'd0 || count_i == 32'd0 || num_layers_i == 8'd0) d.done = 1'b1;
          else d.state = StLayer;
        end
      end
      StLayer: begin
        d.x     = r;
        d.sel_b = 1'b0;
        unique case (mode_i)
          ModeSample: begin
            d.c     = sample_k(r, k_cur);
            d.state = StWrite;
          end
          ModeMutate: begin
            d.state = ({1'b0, r[31:16]} < prob_i) ? StSample : StRdReq;
          end
          ModeCross: begin
            d.sel_b = r[31];
            d.state = StRdReq;
          end
          default: d.state = StIdle;  // mode 0 never leaves idle
        endcase
      end
      StSample: begin
        d.x     = r;
        d.c     = sample_k(r, k_cur);
        d.state = StWrite;
      end
      StRdReq: begin
        mreq_o.valid = 1'b1;
        if (mrsp_i.ready) d.state = StRdWait;
      end
      StRdWait: begin
        if (mrsp_i.valid) begin
          d.c     = mrsp_i.rdata;
          d.state = StWrite;
        end
      end
      StWrite: begin
        mreq_o.valid = 1'b1;
        mreq_o.we    = 1'b1;
        mreq_o.addr  = q.cbase + 32'(q.i);
        if (mrsp_i.ready) begin
          d.state = StLayer;
          if (!last_layer) begin
            d.i = q.i + 8'd1;
          end else if (last_cand) begin
            d.state = StIdle;
            d.done  = 1'b1;
          end else begin
            d.i     = '0;
            d.j     = q.j + 32'd1;
            d.cbase = q.cbase + stride_i;
            if (mode_i == ModeCross) begin
              d.pa      = inc_b[63:32];
              d.pa_base = inc_b[31:0];
              d.pb      = inc_b2[63:32];
              d.pb_base = inc_b2[31:0];
            end else begin
              d.pa      = inc_a[63:32];
              d.pa_base = inc_a[31:0];
            end
          end
        end
      end
      default: d.state = StIdle;
    endcase

    if (abort_i) begin
      d.state = StIdle;
      d.done  = 1'b0;
    end
  end

  `NASA_FF(q, d, '0)

  assign busy_o = (q.state != StIdle);
  assign done_o = q.done;

// Off unless NASA_RTL_ASSERT is defined: Verilator 5.006 deadlocks destroying a model
// whose assertions registered scopes (the benches check the same rule from outside).
`ifdef NASA_RTL_ASSERT
  // A byte request is held stable until accepted (valid/ready rule).
  logic hold_q;
  logic [40:0] req_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hold_q <= 1'b0;
      req_q  <= '0;
    end else begin
      hold_q <= mreq_o.valid && !mrsp_i.ready && !abort_i;
      req_q  <= {mreq_o.we, mreq_o.addr, mreq_o.wdata};
      if (hold_q && !abort_i) begin
        assert (mreq_o.valid && req_q == {mreq_o.we, mreq_o.addr, mreq_o.wdata})
        else $error("nasa_cand_gen: request changed while valid && !ready");
      end
    end
  end
`endif
endmodule
