// Scheduler: walks the fused node table depth-first (pre-order, children in insertion order) once
// per mini-batch of images and, for every node and image, instantiates the node's template
// descriptors (op table) for the engine: the template address plus the X (node input), Y (node
// arena slot) and L (logits) addresses that the templates' PATCH bits substitute. At a leaf it
// also issues the head templates and hands (leaf, image) to the eval unit. Only the current path
// is live: one arena slot per depth (docs/fusion.md).
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
    SIdle, SBatch, SNodeRd, SNodeAt, SOpRd, SOpAt, SNode, SImg, SIssue, SWait, SRunEnd, SEval,
    SEvalWait, SNext, SClimbRd, SClimbAt
  } sstate_e;
  sstate_e st_q, st_d;

  // per-depth output of the node on the current path: the depth whose arena slot holds it (a
  // skip node's output is its input), or SrcImg for the input images (skips from the root).
  // The arena tables and the mini-batch's image pointer do not change during a walk (CSR
  // writes are ignored while busy; img_ptr_q moves at the root only), so an index is enough.
  localparam int unsigned SW = $clog2(MaxLayers + 2);
  localparam logic [SW-1:0] SrcImg = SW'(MaxLayers + 1);
  logic [SW-1:0] out_src_q [MaxLayers+1];
  logic [SW-1:0] xin_src_q;
  logic [15:0] path_q [MaxLayers+1];

  logic [31:0] g0_q, nb_q, b_q, img_ptr_q, img_next_q;
  // g0 * classes (the logits offset of the mini-batch's image 0) and its value for the next
  // mini-batch, summed image by image at the root instead of multiplied
  logic [31:0] g0c_q, g0c_next_q;
  logic [15:0] node_q, first_q;
  logic [7:0] layer_q, choice_q;
  logic [DW-1:0] depth_q;
  logic [23:0] nfirst_q, cfirst_q;  // the node's templates; the run being issued
  logic [7:0] ncount_q, ccount_q, t_q;
  logic head_q;  // issuing the head templates of a leaf
  logic [31:0] xi_q, yi_q, l_q, lnode_q, xin_base_q, xin_stride_q;
  logic leaf;
  assign leaf = (8'(depth_q) == num_layers_i);

  assign busy_o = (st_q != SIdle);

  assign optab_idx_o = 16'(layer_q) * 16'(MaxChoices) + 16'(choice_q);
  assign node_idx_o  = node_q;

  // the head reads the node's output: its slot, or its input for a skip node
  assign xd_valid_o = (st_q == SIssue);
  assign xd_tpl_o   = tpl_addr_i + ((32'(cfirst_q) + 32'(t_q)) << 6);
  assign xd_x_o     = (head_q && ncount_q != '0) ? yi_q : xi_q;
  assign xd_y_o     = yi_q;
  assign xd_l_o     = l_q;

  assign ev_start_o  = (st_q == SEval);
  assign ev_leaf_o   = node_q;
  assign ev_logits_o = l_q;
  assign ev_label_o  = label_addr_i + g0_q + b_q;

  logic [31:0] arena_a, arena_s;
  assign arena_a = arena_addr_i[32'(depth_q)*32 +: 32];
  assign arena_s = arena_stride_i[32'(depth_q)*32 +: 32];

  // X of image 0: the parent's output (the image itself at the root)
  logic [31:0] par_base, par_stride;
  logic [SW-1:0] par_src;
  logic [DW-1:0] depth_m1;
  assign depth_m1   = depth_q - DW'(1);
  assign par_src    = (depth_q == '0) ? SrcImg : out_src_q[depth_m1];
  assign par_base   = (par_src == SrcImg) ? img_ptr_q : arena_addr_i[32'(par_src)*32 +: 32];
  assign par_stride = (par_src == SrcImg) ? img_stride_i : arena_stride_i[32'(par_src)*32 +: 32];

  // next state
  always_comb begin
    st_d = st_q;
    if (abort_i) begin
      st_d = SIdle;
    end else begin
      unique case (st_q)
        SIdle: if (start_i) st_d = SBatch;
        // next mini-batch, or done
        SBatch: st_d = (g0_q >= img_count_i) ? SIdle : SNodeRd;
        SNodeRd: st_d = SNodeAt;  // node_idx_o = node_q; the entry arrives next cycle
        SNodeAt: st_d = (depth_q == '0) ? SNode : SOpRd;  // the root runs the stem
        SOpRd: st_d = SOpAt;
        SOpAt: st_d = SNode;
        SNode: st_d = SImg;
        SImg: st_d = (ncount_q == '0) ? SRunEnd : SIssue;
        SIssue: if (xd_ready_i) st_d = SWait;
        SWait: begin
          if (xd_done_i) st_d = (t_q + 8'd1 < ccount_q) ? SIssue : SRunEnd;
        end
        SRunEnd: begin
          if (leaf && !head_q && head_tpl_i[31:24] != '0) begin
            st_d = SIssue;  // the head's templates
          end else if (leaf) begin
            st_d = SEval;
          end else begin
            st_d = SNext;
          end
        end
        SEval: st_d = SEvalWait;
        SEvalWait: if (ev_done_i) st_d = SNext;
        // next image of the mini-batch, a child, or climb
        SNext: begin
          if (b_q + 32'd1 < nb_q) begin
            st_d = SImg;
          end else if (first_q != NoNode && !leaf) begin
            st_d = SNodeRd;
          end else begin
            st_d = SClimbRd;  // node_q's entry (its next sibling) is read again
          end
        end
        SClimbRd: st_d = SClimbAt;
        SClimbAt: begin
          if (node_next_i != NoNode) begin
            st_d = SNodeRd;
          end else if (depth_q <= DW'(1)) begin
            st_d = SBatch;  // back at the root: the mini-batch is done
          end else begin
            st_d = SClimbRd;
          end
        end
        default: st_d = SIdle;
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q         <= SIdle;
      done_o       <= 1'b0;
      g0_q         <= '0;
      g0c_q        <= '0;
      g0c_next_q   <= '0;
      nb_q         <= '0;
      b_q          <= '0;
      img_ptr_q    <= '0;
      img_next_q   <= '0;
      node_q       <= '0;
      first_q      <= NoNode;
      layer_q      <= '0;
      choice_q     <= '0;
      depth_q      <= '0;
      nfirst_q     <= '0;
      ncount_q     <= '0;
      cfirst_q     <= '0;
      ccount_q     <= '0;
      t_q          <= '0;
      head_q       <= 1'b0;
      xi_q         <= '0;
      yi_q         <= '0;
      l_q          <= '0;
      lnode_q      <= '0;
      xin_base_q   <= '0;
      xin_stride_q <= '0;
      xin_src_q    <= '0;
      for (int d = 0; d <= MaxLayers; d++) begin
        out_src_q[d] <= '0;
        path_q[d]    <= '0;
      end
    end else begin
      st_q   <= st_d;
      done_o <= 1'b0;
      if (!abort_i) begin
        unique case (st_q)
          SIdle: begin
            if (start_i) begin
              g0_q      <= '0;
              g0c_q     <= '0;
              img_ptr_q <= img_addr_i;
            end
          end
          // next mini-batch: images [g0, g0 + nb)
          SBatch: begin
            if (g0_q >= img_count_i) begin
              done_o <= 1'b1;
            end else begin
              nb_q       <= (img_count_i - g0_q < mini_batch_i) ? img_count_i - g0_q : mini_batch_i;
              g0c_next_q <= g0c_q;
              node_q     <= '0;
              depth_q    <= '0;
            end
          end
          SNodeAt: begin
            first_q         <= node_first_i;
            layer_q         <= node_layer_i;
            choice_q        <= node_choice_i;
            path_q[depth_q] <= node_q;
            xin_base_q      <= par_base;
            xin_stride_q    <= par_stride;
            xin_src_q       <= par_src;
            lnode_q         <= logits_addr_i + 32'(node_q[IdW-1:0]) * logits_stride_i;
            if (depth_q == '0) begin
              nfirst_q <= stem_tpl_i[23:0];
              ncount_q <= stem_tpl_i[31:24];
            end
          end
          SOpAt: begin
            nfirst_q <= optab_i[23:0];
            ncount_q <= optab_i[31:24];
          end
          // the node's output placement and image 0 of the mini-batch
          SNode: begin
            out_src_q[depth_q] <= (ncount_q == '0) ? xin_src_q : SW'(depth_q);  // skip: its input
            b_q  <= '0;
            xi_q <= xin_base_q;
            yi_q <= arena_a;
            l_q  <= (logits_stride_i == '0) ? logits_addr_i : lnode_q + g0c_q;
          end
          // one image: the node's templates, then (leaf) the head's and the evaluation
          SImg: begin
            cfirst_q <= nfirst_q;
            ccount_q <= ncount_q;
            t_q      <= '0;
            head_q   <= 1'b0;
          end
          SWait: if (xd_done_i && (t_q + 8'd1 < ccount_q)) t_q <= t_q + 8'd1;
          SRunEnd: begin
            if (leaf && !head_q && head_tpl_i[31:24] != '0) begin
              head_q   <= 1'b1;
              cfirst_q <= head_tpl_i[23:0];
              ccount_q <= head_tpl_i[31:24];
              t_q      <= '0;
            end
          end
          // next image of the mini-batch, or leave the node
          SNext: begin
            if (depth_q == '0) g0c_next_q <= g0c_next_q + 32'(classes_i);
            if (b_q + 32'd1 < nb_q) begin
              b_q  <= b_q + 32'd1;
              xi_q <= xi_q + xin_stride_q;
              yi_q <= yi_q + arena_s;
              l_q  <= (logits_stride_i == '0) ? logits_addr_i : l_q + 32'(classes_i);
            end else begin
              // at the root xi_q is image nb-1 of the mini-batch
              if (depth_q == '0) img_next_q <= xi_q + img_stride_i;
              if (first_q != NoNode && !leaf) begin
                node_q  <= first_q;
                depth_q <= depth_q + DW'(1);
              end
            end
          end
          SClimbAt: begin
            if (node_next_i != NoNode) begin
              node_q <= node_next_i;
            end else if (depth_q <= DW'(1)) begin
              // back at the root: the mini-batch is done
              g0_q      <= g0_q + nb_q;
              g0c_q     <= g0c_next_q;
              img_ptr_q <= img_next_q;
            end else begin
              depth_q <= depth_m1;
              node_q  <= path_q[depth_m1];
            end
          end
          default: ;
        endcase
      end
    end
  end

  logic unused;
  assign unused = ^{node_parent_i, node_q[15:IdW]};

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Engine port, valid/ready: a descriptor waiting for ready is held until accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (xd_valid_o && !xd_ready_i && !abort_i) |=>
                   (xd_valid_o && $stable({xd_tpl_o, xd_x_o, xd_y_o, xd_l_o})))
    else $error("nasa_scheduler: descriptor changed or withdrawn while stalled");
  // FSM legality; the walk never goes deeper than the layers.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q inside {SIdle, SBatch, SNodeRd, SNodeAt, SOpRd, SOpAt, SNode, SImg, SIssue,
                                SWait, SRunEnd, SEval, SEvalWait, SNext, SClimbRd, SClimbAt})
    else $error("nasa_scheduler: illegal state %0d", st_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(depth_q) <= MaxLayers)
    else $error("nasa_scheduler: depth %0d > MaxLayers %0d", depth_q, MaxLayers);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({start_i, abort_i, xd_valid_o, xd_ready_i, xd_done_i, ev_done_i}))
    else $error("nasa_scheduler: X on a control signal");
`endif
endmodule
