// Fusion unit: reads the candidate vectors through the control byte port and builds the node table
// (a prefix tree of the candidates, ids in allocation order, children in insertion order) and the
// candidate-to-leaf table, exactly as docs/fusion.md "Node table" and nasa::fusion::fuse.
//
// One byte is read at a time, and only once the previous byte is fully resolved (child found or
// allocated), so the accesses and the errors come in the order of the sequential algorithm: a
// Window error of the top can never overtake a BadChoice/NodeOverflow of an earlier byte.
// Each field is its own RAM (one write port, one synchronous read port shared by the walk and the
// host). A new node's own links are cleared in the cycle after its allocation (StNew); its parent's
// link is written at allocation. A node's last child is not stored: a miss walks the whole child
// list and ends on it. The root's constant fields (parent, layer, choice) are not stored either.
// Entries are as narrow as the ids: links are $clog2(NodeCap) bits plus a "none" bit, choices
// $clog2(MaxChoices) bits (the top checks K_i <= MaxChoices), so the tables fit 14 iCE40 BRAMs.
//
// The inputs (layer count, K, candidate address/stride/count) must be held while busy. abort_i
// forgets an accepted read: its response, if it comes, must come before the port accepts the next
// read (nasa_ctrl_port answers before it accepts again; a read it drops on a window error is never
// answered, the top aborts then).
module nasa_fusion_unit #(
  parameter int unsigned NodeCap    = nasa_pkg::NodeCap,
  parameter int unsigned MaxLayers  = nasa_pkg::MaxLayers,
  parameter int unsigned MaxChoices = nasa_pkg::MaxChoices,
  parameter int unsigned MaxCands   = nasa_pkg::MaxCands
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   start_i,       // pulse while idle
  input  logic                   abort_i,       // back to idle at once
  output logic                   busy_o,
  output logic                   done_o,        // pulse: every candidate inserted
  output logic                   err_o,         // pulse: stopped with err_code_o / err_index_o
  output logic [7:0]             err_code_o,    // held until the next start
  output logic [31:0]            err_index_o,   // the candidate that failed
  input  logic [7:0]             num_layers_i,  // L, 1..MaxLayers
  input  logic [MaxLayers*8-1:0] layer_k_i,     // K_i at [i*8 +: 8], 1..MaxChoices
  input  logic [31:0]            cand_addr_i,
  input  logic [31:0]            cand_stride_i,
  input  logic [31:0]            cand_count_i,  // 1..MaxCands
  output logic [15:0]            node_count_o,
  // control memory byte port (reads only)
  output nasa_pkg::byte_req_t mreq_o,
  input  nasa_pkg::byte_rsp_t mrsp_i,
  // table read port (while idle): data for the index of one cycle shows the next cycle
  input  logic [15:0]            node_idx_i,
  output logic [15:0]            node_parent_o,
  output logic [15:0]            node_first_o,
  output logic [15:0]            node_next_o,
  output logic [7:0]             node_layer_o,
  output logic [7:0]             node_choice_o,
  input  logic [15:0]            leaf_idx_i,
  output logic [15:0]            leaf_o
);
  localparam int unsigned IdW    = (NodeCap > 1) ? $clog2(NodeCap) : 1;    // node id
  localparam int unsigned LinkW  = IdW + 1;                                // msb set: no node
  localparam int unsigned LayW   = (MaxLayers > 1) ? $clog2(MaxLayers) : 1;
  localparam int unsigned ChW    = (MaxChoices > 1) ? $clog2(MaxChoices) : 1;  // choice < K <= Max
  localparam int unsigned CandAW = (MaxCands > 1) ? $clog2(MaxCands) : 1;  // leaf table index
  localparam int unsigned JW     = $clog2(MaxCands + 1);                   // candidate counter
  localparam logic [LinkW-1:0] LinkNone = {1'b1, {IdW{1'b0}}};

  function automatic logic [LinkW-1:0] link_of(logic [IdW-1:0] id);
    link_of = {1'b0, id};
  endfunction

  function automatic logic [15:0] link_out(logic [LinkW-1:0] l);
    link_out = l[IdW] ? 16'(nasa_pkg::NoNode) : 16'(l[IdW-1:0]);
  endfunction

  typedef enum logic [1:0] {
    StIdle,  // table readable by the host
    StWait,  // waiting for the choice byte of (candidate j_q, layer wi_q); checks it
    StStep,  // comparing child x_q (read last cycle) with ch_q
    StNew    // clearing the links of the node allocated last cycle
  } state_e;

  state_e state_d, state_q;
  logic [JW-1:0] j_d, j_q;                    // candidate
  logic [LayW-1:0] wi_d, wi_q;                // layer
  logic [IdW-1:0] cur_d, cur_q;               // node the walk is at
  logic [LinkW-1:0] cur_first_d, cur_first_q; // its first child
  logic [LinkW-1:0] root_first_d, root_first_q;
  logic [IdW-1:0] x_d, x_q;                   // child being compared
  logic [ChW-1:0] ch_d, ch_q;                 // choice searched for
  logic [IdW-1:0] new_d, new_q;               // node allocated last cycle
  logic last_d, last_q;                       // ... by the last candidate's last layer
  logic [15:0] count_d, count_q;
  logic [31:0] base_d, base_q;                // current candidate's vector
  logic [31:0] addr_d, addr_q;                // next byte to read
  logic req_d, req_q;                         // read request presented
  logic pend_d, pend_q;                       // read accepted, response not yet seen
  logic done_d, done_q, err_d, err_q;
  logic [7:0] err_code_d, err_code_q;
  logic [JW-1:0] err_index_d, err_index_q;

  // ---------------- table RAMs ----------------
  // parent, layer and choice of a node are written together and read together: one RAM (one
  // EBR on the fpga board instead of three)
  localparam int unsigned PlcW = IdW + LayW + ChW;
  logic [PlcW-1:0]  plc_mem    [NodeCap];
  logic [LinkW-1:0] first_mem  [NodeCap];
  logic [LinkW-1:0] next_mem   [NodeCap];
  logic [IdW-1:0]   leaf_mem   [MaxCands];

  logic [IdW-1:0] rd_addr;
  logic [IdW-1:0] parent_rd_q;
  logic [LayW-1:0] layer_rd_q;
  logic [ChW-1:0] choice_rd_q;
  logic [LinkW-1:0] first_rd_q, next_rd_q;
  logic [IdW-1:0] leaf_rd_q;
  logic root_rd_q;

  logic node_we;  // parent/layer/choice of node count_q
  logic [ChW-1:0] node_choice;
  logic first_we, next_we, leaf_we;
  logic [IdW-1:0] first_waddr, next_waddr;
  logic [LinkW-1:0] first_wdata, next_wdata;
  logic [IdW-1:0] leaf_wdata;

  always_ff @(posedge clk_i) begin
    if (node_we) plc_mem[count_q[IdW-1:0]] <= {node_choice, wi_q, cur_q};
    if (first_we) first_mem[first_waddr] <= first_wdata;
    if (next_we) next_mem[next_waddr] <= next_wdata;
    if (leaf_we) leaf_mem[j_q[CandAW-1:0]] <= leaf_wdata;
    {choice_rd_q, layer_rd_q, parent_rd_q} <= plc_mem[rd_addr];
    first_rd_q  <= first_mem[rd_addr];
    next_rd_q   <= next_mem[rd_addr];
    leaf_rd_q   <= leaf_mem[leaf_idx_i[CandAW-1:0]];
    root_rd_q   <= (node_idx_i == '0);
  end

  assign node_parent_o = root_rd_q ? 16'(nasa_pkg::NoNode) : 16'(parent_rd_q);
  assign node_layer_o  = root_rd_q ? 8'hFF : 8'(layer_rd_q);
  assign node_choice_o = root_rd_q ? 8'hFF : 8'(choice_rd_q);
  assign node_first_o  = link_out(first_rd_q);
  assign node_next_o   = link_out(next_rd_q);
  assign leaf_o        = 16'(leaf_rd_q);

  // ---------------- outputs ----------------
  assign busy_o       = (state_q != StIdle);
  assign done_o       = done_q;
  assign err_o        = err_q;
  assign err_code_o   = err_code_q;
  assign err_index_o  = 32'(err_index_q);
  assign node_count_o = count_q;
  assign mreq_o.valid = req_q;
  assign mreq_o.we    = 1'b0;
  assign mreq_o.addr  = addr_q;
  assign mreq_o.wdata = '0;

  logic unused_inputs;
  assign unused_inputs = ^{cand_count_i[31:JW], leaf_idx_i[15:CandAW]};

  // ---------------- walk ----------------
  logic [7:0] k_cur;
  logic last_layer, last_cand, byte_v, fire;
  always_comb begin
    k_cur = layer_k_i[7:0];
    for (int i = 0; i < MaxLayers; i++) begin
      if (wi_q == LayW'(i)) k_cur = layer_k_i[i*8 +: 8];
    end
  end
  assign last_layer = (8'(wi_q) == num_layers_i - 8'd1);
  assign last_cand  = (j_q + JW'(1) == cand_count_i[JW-1:0]);
  assign byte_v     = pend_q && mrsp_i.valid;
  assign fire       = req_q && mrsp_i.ready;

  logic alloc, resolve, found_last;
  logic [IdW-1:0] res_node;
  logic [LinkW-1:0] res_first;

  always_comb begin
    state_d      = state_q;
    j_d          = j_q;
    wi_d         = wi_q;
    cur_d        = cur_q;
    cur_first_d  = cur_first_q;
    root_first_d = root_first_q;
    x_d          = x_q;
    ch_d         = ch_q;
    new_d        = new_q;
    last_d       = last_q;
    count_d      = count_q;
    base_d       = base_q;
    addr_d       = addr_q;
    req_d        = req_q && !fire;
    pend_d       = (pend_q && !mrsp_i.valid) || fire;
    done_d       = 1'b0;
    err_d        = 1'b0;
    err_code_d   = err_code_q;
    err_index_d  = err_index_q;

    rd_addr     = node_idx_i[IdW-1:0];
    node_we     = 1'b0;
    node_choice = ch_q;
    first_we    = 1'b0;
    first_waddr = cur_q;
    first_wdata = link_of(count_q[IdW-1:0]);
    next_we     = 1'b0;
    next_waddr  = x_q;
    next_wdata  = link_of(count_q[IdW-1:0]);
    leaf_we     = 1'b0;
    leaf_wdata  = '0;
    alloc       = 1'b0;  // insert (cur_q, wi_q, node_choice) as a child of cur_q
    resolve     = 1'b0;  // this layer of this candidate ends on res_node
    found_last  = 1'b0;
    res_node    = x_q;
    res_first   = first_rd_q;

    unique case (state_q)
      StIdle: begin
        if (start_i && !abort_i) begin
          state_d      = StWait;
          j_d          = '0;
          wi_d         = '0;
          cur_d        = '0;
          cur_first_d  = LinkNone;
          root_first_d = LinkNone;
          count_d      = 16'd1;
          base_d       = cand_addr_i;
          addr_d       = cand_addr_i;
          req_d        = 1'b1;
          err_code_d   = nasa_pkg::ErrNone;
          err_index_d  = '0;
          first_we     = 1'b1;
          first_waddr  = '0;
          first_wdata  = LinkNone;
          next_we      = 1'b1;
          next_waddr   = '0;
          next_wdata   = LinkNone;
        end
      end
      StWait: begin
        // read the first child now so that StStep has it
        rd_addr     = cur_first_q[IdW-1:0];
        node_choice = mrsp_i.rdata[ChW-1:0];
        if (byte_v) begin
          ch_d = mrsp_i.rdata[ChW-1:0];
          if (mrsp_i.rdata >= k_cur) begin
            state_d     = StIdle;
            err_d       = 1'b1;
            err_code_d  = nasa_pkg::ErrBadChoice;
            err_index_d = j_q;
          end else if (cur_first_q[IdW]) begin
            alloc    = 1'b1;
            first_we = 1'b1;  // the new node is cur's first child
          end else begin
            state_d = StStep;
            x_d     = cur_first_q[IdW-1:0];
          end
        end
      end
      StStep: begin
        rd_addr = next_rd_q[IdW-1:0];
        if (choice_rd_q == ch_q) begin
          resolve = 1'b1;
        end else if (next_rd_q[IdW]) begin
          alloc   = 1'b1;
          next_we = 1'b1;  // the new node follows x, the last child
        end else begin
          x_d = next_rd_q[IdW-1:0];
        end
      end
      StNew: begin
        first_we    = 1'b1;
        first_waddr = new_q;
        first_wdata = LinkNone;
        next_we     = 1'b1;
        next_waddr  = new_q;
        next_wdata  = LinkNone;
        if (last_q) begin
          state_d = StIdle;
          done_d  = 1'b1;
        end else begin
          state_d = StWait;
        end
      end
      default: state_d = StIdle;
    endcase

    if (alloc) begin
      if (count_q == 16'(NodeCap)) begin
        first_we    = 1'b0;
        next_we     = 1'b0;
        state_d     = StIdle;
        err_d       = 1'b1;
        err_code_d  = nasa_pkg::ErrNodeOverflow;
        err_index_d = j_q;
      end else begin
        node_we   = 1'b1;
        count_d   = count_q + 16'd1;
        new_d     = count_q[IdW-1:0];
        state_d   = StNew;
        resolve   = 1'b1;
        res_node  = count_q[IdW-1:0];
        res_first = LinkNone;
        if (cur_q == '0 && cur_first_q[IdW]) root_first_d = link_of(count_q[IdW-1:0]);
      end
    end

    if (resolve) begin
      if (last_layer) begin
        leaf_we    = 1'b1;
        leaf_wdata = res_node;
        if (last_cand) begin
          found_last = 1'b1;
        end else begin
          j_d         = j_q + JW'(1);
          wi_d        = '0;
          cur_d       = '0;
          cur_first_d = root_first_d;
          base_d      = base_q + cand_stride_i;
          addr_d      = base_q + cand_stride_i;
          req_d       = 1'b1;
        end
      end else begin
        wi_d        = wi_q + LayW'(1);
        cur_d       = res_node;
        cur_first_d = res_first;
        addr_d      = addr_q + 32'd1;
        req_d       = 1'b1;
      end
      if (!alloc) begin
        // a match: the next byte is waited for at once (or the run is over)
        state_d = found_last ? StIdle : StWait;
        done_d  = found_last;
      end
      last_d = found_last;
    end

    if (abort_i) begin
      state_d = StIdle;
      req_d   = 1'b0;
      pend_d  = 1'b0;
      done_d  = 1'b0;
      err_d   = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      j_q          <= '0;
      wi_q         <= '0;
      cur_q        <= '0;
      cur_first_q  <= LinkNone;
      root_first_q <= LinkNone;
      x_q          <= '0;
      ch_q         <= '0;
      new_q        <= '0;
      last_q       <= 1'b0;
      count_q      <= '0;
      base_q       <= '0;
      addr_q       <= '0;
      req_q        <= 1'b0;
      pend_q       <= 1'b0;
      done_q       <= 1'b0;
      err_q        <= 1'b0;
      err_code_q   <= nasa_pkg::ErrNone;
      err_index_q  <= '0;
    end else begin
      state_q      <= state_d;
      j_q          <= j_d;
      wi_q         <= wi_d;
      cur_q        <= cur_d;
      cur_first_q  <= cur_first_d;
      root_first_q <= root_first_d;
      x_q          <= x_d;
      ch_q         <= ch_d;
      new_q        <= new_d;
      last_q       <= last_d;
      count_q      <= count_d;
      base_q       <= base_d;
      addr_q       <= addr_d;
      req_q        <= req_d;
      pend_q       <= pend_d;
      done_q       <= done_d;
      err_q        <= err_d;
      err_code_q   <= err_code_d;
      err_index_q  <= err_index_d;
    end
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // One read at a time: a request is presented only with nothing outstanding.
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(req_q && pend_q))
    else $error("nasa_fusion_unit: request while a read is outstanding");
  // valid/ready: a request waiting for ready is held, unchanged, until accepted (abort_i drops it).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mreq_o.valid && !mrsp_i.ready && !abort_i) |=>
                   (mreq_o.valid && $stable(mreq_o.addr)))
    else $error("nasa_fusion_unit: request changed or withdrawn while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(mreq_o.valid && mreq_o.we))
    else $error("nasa_fusion_unit: a write request");
  // FSM legality, and done/err are single pulses that end a run.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   state_q inside {StIdle, StWait, StStep, StNew})
    else $error("nasa_fusion_unit: illegal state %0d", state_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(done_q && err_q))
    else $error("nasa_fusion_unit: done and error together");
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(count_q) <= NodeCap)
    else $error("nasa_fusion_unit: %0d nodes, NodeCap %0d", count_q, NodeCap);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({start_i, abort_i, mreq_o.valid, mrsp_i.ready, mrsp_i.valid}))
    else $error("nasa_fusion_unit: X on a control signal");
`endif
endmodule
