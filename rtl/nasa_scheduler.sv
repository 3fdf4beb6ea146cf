// Scheduler: walks the fused node table depth-first (pre-order, children in insertion order) once
// per mini-batch of images and, for every node, instantiates the node's template descriptors (op
// table) for the engine, each template for every image of the mini-batch before the next (so its
// weights stay on chip): the template address plus the X (node input), Y (node arena slot),
// L (logits) addresses and the scratch offset S that the templates' PATCH bits add.
// At a leaf it also issues the head templates the same way, waits until they completed and hands
// (leaf, image) to the eval unit image by image. A template the engine runs for several images
// at once (packed) covers the offers of its further images: the engine takes them at once. Only the current path is live: one arena slot
// per depth and image (docs/fusion.md).
`include "nasa_regs.svh"

module nasa_scheduler #(
  parameter int unsigned NodeCap    = nasa_pkg::NodeCap,
  parameter int unsigned MaxLayers  = nasa_pkg::MaxLayers,
  parameter int unsigned MaxChoices = nasa_pkg::MaxChoices
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        start_i,
  input  logic        abort_i,
  output logic        busy_o,
  output logic        done_o,   // pulse
  // configuration (stable during the run)
  input  logic [7:0]  num_layers_i,
  input  logic [31:0] tpl_addr_i,
  input  logic [31:0] stem_tpl_i,
  input  logic [31:0] head_tpl_i,
  input  logic [31:0] img_addr_i,
  input  logic [31:0] img_stride_i,
  input  logic [31:0] img_count_i,
  input  logic [31:0] label_addr_i,
  input  logic [31:0] mini_batch_i,
  input  logic [15:0] classes_i,
  input  logic [31:0] logits_addr_i,
  input  logic [31:0] logits_stride_i,
  input  logic [31:0] scratch_stride_i,
  input  logic [(MaxLayers+1)*32-1:0] arena_addr_i,
  input  logic [(MaxLayers+1)*32-1:0] arena_stride_i,
  // op table read port (registered: entry of optab_idx_o valid the next cycle)
  output logic [15:0] optab_idx_o,
  input  logic [31:0] optab_i,
  // node table read port (registered)
  output logic [15:0] node_idx_o,
  input  logic [15:0] node_parent_i,
  input  logic [15:0] node_first_i,
  input  logic [15:0] node_next_i,
  input  logic [7:0]  node_layer_i,
  input  logic [7:0]  node_choice_i,
  // engine, ext mode
  output logic        xd_valid_o,
  input  logic        xd_ready_i,
  output logic [31:0] xd_tpl_o,
  output logic [31:0] xd_x_o,
  output logic [31:0] xd_y_o,
  output logic [31:0] xd_l_o,
  output logic [31:0] xd_s_o,
  output logic [7:0]  xd_n_o,    // images left in the mini-batch from b (at most 255)
  input  logic        xd_cov_i,  // with xd_ready_i: covered by a packed layer (no completion)
  input  logic        xd_done_i,
  // eval unit
  output logic        ev_start_o,
  output logic [15:0] ev_leaf_o,
  output logic [31:0] ev_logits_o,
  output logic [31:0] ev_label_o,
  input  logic        ev_done_i
);
  localparam int unsigned DW = $clog2(MaxLayers + 1);  // depth 0..MaxLayers
  localparam int unsigned IdW = (NodeCap > 1) ? $clog2(NodeCap) : 1;  // node ids < NodeCap
  localparam logic [15:0] NoNode = 16'(nasa_pkg::NoNode);

  typedef enum logic [3:0] {
    SIdle, SBatch, SBatchAdv, SNodeRd, SNodeAt, SOpRd, SOpAt, SNode, SIssue, SRunEnd, SDrain,
    SEval, SEvalWait, SNext, SClimbRd, SClimbAt
  } sstate_e;

  // per-depth output of the node on the current path: the depth whose arena slot holds it (a
  // skip node's output is its input), or SrcImg for the input images (skips from the root).
  // The arena tables and the mini-batch's image pointer do not change during a walk (CSR
  // writes are ignored while busy; the image pointer moves in SClimbAt, between mini-batches),
  // so an index is enough.
  localparam int unsigned SW = $clog2(MaxLayers + 2);
  localparam logic [SW-1:0] SrcImg = SW'(MaxLayers + 1);
  logic [SW-1:0] out_src_q [MaxLayers+1];
  logic [15:0] path_q [MaxLayers+1];
  logic path_we, out_src_we;  // write path_q / out_src_q at the current depth
  logic first_img;            // back to image 0 of the node's mini-batch (a template's first)
  logic [SW-1:0] out_src_d;

  // registers (all zero after reset)
  typedef struct packed {
    sstate_e st;   // the FSM state (SIdle: 0)
    logic          done;        // done_o
    logic [31:0]   g0, nb, b;   // the mini-batch: images [g0, g0 + nb), image b of it
    logic [31:0]   img_ptr, img_next;
    // g0 * classes (the logits offset of the mini-batch's image 0) and its value for the next
    // mini-batch, summed image by image (SBatchAdv) instead of multiplied
    logic [31:0]   g0c, g0c_next;
    logic [15:0]   node, first;
    logic [7:0]    layer, choice;
    logic [DW-1:0] depth;
    logic [23:0]   nfirst, cfirst;  // the node's templates; the run being issued
    logic [7:0]    ncount, ccount, t;
    logic          head;        // issuing the head templates of a leaf
    logic [3:0]    out;         // descriptors the engine took and has not completed
    // image b's X, Y, L and scratch offset S; lnode: L of image 0 (from SNode on)
    logic [31:0]   xi, yi, l, si, lnode, xin_base, xin_stride;
    logic [SW-1:0] xin_src;
  } regs_t;
  regs_t q, d;
  logic leaf;
  assign leaf = (8'(q.depth) == num_layers_i);

  assign busy_o = (q.st != SIdle);
  assign done_o = q.done;

  assign optab_idx_o = 16'(q.layer) * 16'(MaxChoices) + 16'(q.choice);
  assign node_idx_o  = q.node;

  // the head reads the node's output: its slot, or its input for a skip node
  assign xd_valid_o = (q.st == SIssue);
  assign xd_tpl_o   = tpl_addr_i + ((32'(q.cfirst) + 32'(q.t)) << 6);
  assign xd_x_o     = (q.head && q.ncount != '0) ? q.yi : q.xi;
  assign xd_y_o     = q.yi;
  assign xd_l_o     = q.l;
  assign xd_s_o     = q.si;
  assign xd_n_o     = (q.nb - q.b > 32'd255) ? 8'd255 : 8'(q.nb - q.b);

  assign ev_start_o  = (q.st == SEval);
  assign ev_leaf_o   = q.node;
  assign ev_logits_o = q.l;
  assign ev_label_o  = label_addr_i + q.g0 + q.b;

  logic [31:0] arena_a, arena_s;
  assign arena_a = arena_addr_i[32'(q.depth)*32 +: 32];
  assign arena_s = arena_stride_i[32'(q.depth)*32 +: 32];

  // X of image 0: the parent's output (the image itself at the root)
  logic [31:0] par_base, par_stride;
  logic [SW-1:0] par_src;
  logic [DW-1:0] depth_m1;
  assign depth_m1   = q.depth - DW'(1);
  assign par_src    = (q.depth == '0) ? SrcImg : out_src_q[depth_m1];
  assign par_base   = (par_src == SrcImg) ? q.img_ptr : arena_addr_i[32'(par_src)*32 +: 32];
  assign par_stride = (par_src == SrcImg) ? img_stride_i : arena_stride_i[32'(par_src)*32 +: 32];

  // next state and registers
  always_comb begin
    d          = q;
    d.done     = 1'b0;
    d.out      = q.out + 4'(xd_valid_o && xd_ready_i && !xd_cov_i) - 4'(xd_done_i);
    path_we    = 1'b0;
    out_src_we = 1'b0;
    first_img  = 1'b0;
    out_src_d  = (q.ncount == '0) ? q.xin_src : SW'(q.depth);  // a skip node's output: its input
    if (abort_i) begin
      d.st  = SIdle;
      d.out = '0;  // (the engine aborts too: what it took completes no more)
    end else begin
      unique case (q.st)
        SIdle: begin
          if (start_i) begin
            d.st      = SBatch;
            d.out     = '0;
            d.g0      = '0;
            d.g0c     = '0;
            d.img_ptr = img_addr_i;
          end
        end
        // next mini-batch: images [g0, g0 + nb), or done (the last leaf's evaluation waited for
        // every descriptor to complete)
        SBatch: begin
          if (q.g0 >= img_count_i) begin
            if (q.out == '0) begin
              d.st   = SIdle;
              d.done = 1'b1;
            end
          end else begin
            d.st       = SBatchAdv;
            d.nb       = (img_count_i - q.g0 < mini_batch_i) ? img_count_i - q.g0 : mini_batch_i;
            d.b        = '0;
            d.img_next = q.img_ptr + img_stride_i;
            d.g0c_next = q.g0c + 32'(classes_i);
            d.node     = '0;
            d.depth    = '0;
          end
        end
        // the next mini-batch's first image and logits offset, one image a cycle
        SBatchAdv: begin
          if (q.b + 32'd1 < q.nb) begin
            d.b        = q.b + 32'd1;
            d.img_next = q.img_next + img_stride_i;
            d.g0c_next = q.g0c_next + 32'(classes_i);
          end else begin
            d.st = SNodeRd;
          end
        end
        SNodeRd: d.st = SNodeAt;  // node_idx_o = q.node; the entry arrives next cycle
        SNodeAt: begin
          d.st         = (q.depth == '0) ? SNode : SOpRd;  // the root runs the stem
          d.first      = node_first_i;
          d.layer      = node_layer_i;
          d.choice     = node_choice_i;
          path_we      = 1'b1;
          d.xin_base   = par_base;
          d.xin_stride = par_stride;
          d.xin_src    = par_src;
          d.lnode      = logits_addr_i + 32'(q.node[IdW-1:0]) * logits_stride_i;
          if (q.depth == '0) begin
            d.nfirst = stem_tpl_i[23:0];
            d.ncount = stem_tpl_i[31:24];
          end
        end
        SOpRd: d.st = SOpAt;
        SOpAt: begin
          d.st     = SNode;
          d.nfirst = optab_i[23:0];
          d.ncount = optab_i[31:24];
        end
        // the node's output placement, its logits for image 0, its first template for image 0
        SNode: begin
          d.st       = (q.ncount == '0) ? SRunEnd : SIssue;
          out_src_we = 1'b1;
          d.lnode    = (logits_stride_i == '0) ? logits_addr_i : q.lnode + q.g0c;
          first_img  = 1'b1;
          d.cfirst   = q.nfirst;
          d.ccount   = q.ncount;
          d.t        = '0;
          d.head     = 1'b0;
        end
        // streaming: template t for image b is offered until the engine takes it (its fetch
        // issued); then the next image, or the next template from image 0. The engine runs them
        // like a program's layers.
        SIssue: begin
          if (xd_ready_i && (q.b + 32'd1 < q.nb)) begin
            d.b  = q.b + 32'd1;
            d.xi = q.xi + q.xin_stride;
            d.yi = q.yi + arena_s;
            d.l  = q.l + 32'(classes_i);
            d.si = q.si + scratch_stride_i;
          end else if (xd_ready_i && (q.t + 8'd1 < q.ccount)) begin
            d.t       = q.t + 8'd1;
            first_img = 1'b1;
          end else if (xd_ready_i) begin
            d.st = SRunEnd;
          end
        end
        SRunEnd: begin
          if (leaf && !q.head && head_tpl_i[31:24] != '0) begin
            d.st      = SIssue;  // the head's templates
            d.head    = 1'b1;
            d.cfirst  = head_tpl_i[23:0];
            d.ccount  = head_tpl_i[31:24];
            d.t       = '0;
            first_img = 1'b1;
          end else begin
            d.st = leaf ? SDrain : SNext;
          end
        end
        // the leaf's logits are written once every descriptor the engine took has completed;
        // then the eval unit scores the mini-batch's images one by one
        SDrain: begin
          if (q.out == '0) begin
            d.st = SEval;
            d.b  = '0;
            d.l  = q.lnode;
          end
        end
        SEval: d.st = SEvalWait;
        SEvalWait: begin
          if (ev_done_i && (q.b + 32'd1 < q.nb)) begin
            d.st = SEval;
            d.b  = q.b + 32'd1;
            d.l  = q.l + 32'(classes_i);
          end else if (ev_done_i) begin
            d.st = SNext;
          end
        end
        // a child, or climb
        SNext: begin
          if (q.first != NoNode && !leaf) begin
            d.st    = SNodeRd;
            d.node  = q.first;
            d.depth = q.depth + DW'(1);
          end else begin
            d.st = SClimbRd;  // the node's entry (its next sibling) is read again
          end
        end
        SClimbRd: d.st = SClimbAt;
        SClimbAt: begin
          if (node_next_i != NoNode) begin
            d.st   = SNodeRd;
            d.node = node_next_i;
          end else if (q.depth <= DW'(1)) begin
            d.st      = SBatch;  // back at the root: the mini-batch is done
            d.g0      = q.g0 + q.nb;
            d.g0c     = q.g0c_next;
            d.img_ptr = q.img_next;
          end else begin
            d.st    = SClimbRd;
            d.depth = depth_m1;
            d.node  = path_q[depth_m1];
          end
        end
        default: d.st = SIdle;
      endcase
      // image 0 of the node's mini-batch: its X, Y, logits (d.lnode: SNode sets it this cycle)
      // and scratch offset
      if (first_img) begin
        d.b  = '0;
        d.xi = q.xin_base;
        d.yi = arena_a;
        d.l  = d.lnode;
        d.si = '0;
      end
    end
  end

  `NASA_FF(q, d, '0)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i <= MaxLayers; i++) begin
        out_src_q[i] <= '0;
        path_q[i]    <= '0;
      end
    end else begin
      if (path_we) path_q[q.depth] <= q.node;
      if (out_src_we) out_src_q[q.depth] <= out_src_d;
    end
  end

  logic unused;
  assign unused = ^{node_parent_i, q.node[15:IdW]};

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Engine port, valid/ready: a descriptor waiting for ready is held until accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (xd_valid_o && !xd_ready_i && !abort_i) |=>
                   (xd_valid_o && $stable({xd_tpl_o, xd_x_o, xd_y_o, xd_l_o, xd_s_o})))
    else $error("nasa_scheduler: descriptor changed or withdrawn while stalled");
  // FSM legality; the walk never goes deeper than the layers.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   q.st inside {SIdle, SBatch, SBatchAdv, SNodeRd, SNodeAt, SOpRd, SOpAt, SNode,
                                SIssue, SRunEnd, SDrain, SEval, SEvalWait, SNext, SClimbRd,
                                SClimbAt})
    else $error("nasa_scheduler: illegal state %0d", q.st);
  // every completion is of a descriptor taken before; at most four are in the engine at once
  // (three unfinished layers and one in its front end)
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (xd_done_i && !abort_i) |-> (q.out != '0 || (xd_valid_o && xd_ready_i)))
    else $error("nasa_scheduler: a completion with no descriptor outstanding");
  assert property (@(posedge clk_i) disable iff (!rst_ni) q.out <= 4'd4)
    else $error("nasa_scheduler: %0d descriptors outstanding", q.out);
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(q.depth) <= MaxLayers)
    else $error("nasa_scheduler: depth %0d > MaxLayers %0d", q.depth, MaxLayers);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({start_i, abort_i, xd_valid_o, xd_ready_i, xd_done_i, ev_done_i}))
    else $error("nasa_scheduler: X on a control signal");
`endif
endmodule
