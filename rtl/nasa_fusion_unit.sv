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
    StWait,  // waiting for the choice byte of (candidate q.j, layer q.wi); checks it
    StStep,  // comparing child q.x (read last cycle) with q.ch
    StNew    // clearing the links of the node allocated last cycle
  } state_e;

  // the registers (reset: ResetQ)
  typedef struct packed {
    state_e           state;
    logic [JW-1:0]    j;                         // candidate
    logic [LayW-1:0]  wi;                        // layer
    logic [IdW-1:0]   cur;                       // node the walk is at
    logic [LinkW-1:0] cur_first;                 // its first child
    logic [LinkW-1:0] root_first;
    logic [IdW-1:0]   x;                         // child being compared
    logic [ChW-1:0]   ch;                        // choice searched for
    logic [IdW-1:0]   new_id;                    // node allocated last cycle
    logic             last;                      // ... by the last candidate's last layer
    logic [15:0]      count;
    logic [31:0]      base;                      // current candidate's vector
    logic [31:0]      addr;                      // next byte to read
    logic             req;                       // read request presented
    logic             pend;                      // read accepted, response not yet seen
    logic             done;
    logic             err;
    logic [7:0]       err_code;
    logic [JW-1:0]    err_index;
  } regs_t;
  regs_t q, d;

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

  logic node_we;  // parent/layer/choice of node q.count
  logic [ChW-1:0] node_choice;
  logic first_we, next_we, leaf_we;
  logic [IdW-1:0] first_waddr, next_waddr;
  logic [LinkW-1:0] first_wdata, next_wdata;
  logic [IdW-1:0] leaf_wdata;

  always_ff @(posedge clk_i) begin
    if (node_we) plc_mem[q.count[IdW-1:0]] <= {node_choice, q.wi, q.cur};
    if (first_we) first_mem[first_waddr] <= first_wdata;
    if (next_we) next_mem[next_waddr] <= next_wdata;
    if (leaf_we) leaf_mem[q.j[CandAW-1:0]] <= leaf_wdata;
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
  assign busy_o       = (q.state != StIdle);
  assign done_o       = q.done;
  assign err_o        = q.err;
  assign err_code_o   = q.err_code;
  assign err_index_o  = 32'(q.err_index);
  assign node_count_o = q.count;
  assign mreq_o.valid = q.req;
  assign mreq_o.we    = 1'b0;
  assign mreq_o.addr  = q.addr;
  assign mreq_o.wdata = '0;

  logic unused_inputs;
  assign unused_inputs = ^{cand_count_i[31:JW], leaf_idx_i[15:CandAW]};

  // ---------------- walk ----------------
  logic [7:0] k_cur;
  logic last_layer, last_cand, byte_v, fire;
  always_comb begin
    k_cur = layer_k_i[7:0];
    for (int i = 0; i < MaxLayers; i++) begin
      if (q.wi == LayW'(i)) k_cur = layer_k_i[i*8 +: 8];
    end
  end
  assign last_layer = (8'(q.wi) == num_layers_i - 8'd1);
  assign last_cand  = (q.j + JW'(1) == cand_count_i[JW-1:0]);
  assign byte_v     = q.pend && mrsp_i.valid;
  assign fire       = q.req && mrsp_i.ready;

  logic alloc, resolve, found_last;
  logic [IdW-1:0] res_node;
  logic [LinkW-1:0] res_first;

  always_comb begin
    d = q;
    d.req        = q.req && !fire;
    d.pend       = (q.pend && !mrsp_i.valid) || fire;
    d.done       = 1'b0;
    d.err        = 1'b0;

    rd_addr     = node_idx_i[IdW-1:0];
    node_we     = 1'b0;
    node_choice = q.ch;
    first_we    = 1'b0;
    first_waddr = q.cur;
    first_wdata = link_of(q.count[IdW-1:0]);
    next_we     = 1'b0;
    next_waddr  = q.x;
    next_wdata  = link_of(q.count[IdW-1:0]);
    leaf_we     = 1'b0;
    leaf_wdata  = '0;
    alloc       = 1'b0;  // insert (q.cur, q.wi, node_choice) as a child of q.cur
    resolve     = 1'b0;  // this layer of this candidate ends on res_node
    found_last  = 1'b0;
    res_node    = q.x;
    res_first   = first_rd_q;

    unique case (q.state)
      StIdle: begin
        if (start_i && !abort_i) begin
          d.state      = StWait;
          d.j          = '0;
          d.wi         = '0;
          d.cur        = '0;
          d.cur_first  = LinkNone;
          d.root_first = LinkNone;
          d.count      = 16'd1;
          d.base       = cand_addr_i;
          d.addr       = cand_addr_i;
          d.req        = 1'b1;
          d.err_code   = nasa_pkg::ErrNone;
          d.err_index  = '0;
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
        rd_addr     = q.cur_first[IdW-1:0];
        node_choice = mrsp_i.rdata[ChW-1:0];
        if (byte_v) begin
          d.ch = mrsp_i.rdata[ChW-1:0];
          if (mrsp_i.rdata >= k_cur) begin
            d.state     = StIdle;
            d.err       = 1'b1;
            d.err_code  = nasa_pkg::ErrBadChoice;
            d.err_index = q.j;
          end else if (q.cur_first[IdW]) begin
            alloc    = 1'b1;
            first_we = 1'b1;  // the new node is cur's first child
          end else begin
            d.state = StStep;
            d.x     = q.cur_first[IdW-1:0];
          end
        end
      end
      StStep: begin
        rd_addr = next_rd_q[IdW-1:0];
        if (choice_rd_q == q.ch) begin
          resolve = 1'b1;
        end else if (next_rd_q[IdW]) begin
          alloc   = 1'b1;
          next_we = 1'b1;  // the new node follows x, the last child
        end else begin
          d.x = next_rd_q[IdW-1:0];
        end
      end
      StNew: begin
        first_we    = 1'b1;
        first_waddr = q.new_id;
        first_wdata = LinkNone;
        next_we     = 1'b1;
        next_waddr  = q.new_id;
        next_wdata  = LinkNone;
        if (q.last) begin
          d.state = StIdle;
          d.done  = 1'b1;
        end else begin
          d.state = StWait;
        end
      end
      default: d.state = StIdle;
    endcase

    if (alloc) begin
      if (q.count == 16'(NodeCap)) begin
        first_we    = 1'b0;
        next_we     = 1'b0;
        d.state     = StIdle;
        d.err       = 1'b1;
        d.err_code  = nasa_pkg::ErrNodeOverflow;
        d.err_index = q.j;
      end else begin
        node_we   = 1'b1;
        d.count   = q.count + 16'd1;
        d.new_id     = q.count[IdW-1:0];
        d.state   = StNew;
        resolve   = 1'b1;
        res_node  = q.count[IdW-1:0];
        res_first = LinkNone;
        if (q.cur == '0 && q.cur_first[IdW]) d.root_first = link_of(q.count[IdW-1:0]);
      end
    end

    if (resolve) begin
      if (last_layer) begin
        leaf_we    = 1'b1;
        leaf_wdata = res_node;
        if (last_cand) begin
          found_last = 1'b1;
        end else begin
          d.j         = q.j + JW'(1);
          d.wi        = '0;
          d.cur       = '0;
          d.cur_first = d.root_first;
          d.base      = q.base + cand_stride_i;
          d.addr      = q.base + cand_stride_i;
          d.req       = 1'b1;
        end
      end else begin
        d.wi        = q.wi + LayW'(1);
        d.cur       = res_node;
        d.cur_first = res_first;
        d.addr      = q.addr + 32'd1;
        d.req       = 1'b1;
      end
      if (!alloc) begin
        // a match: the next byte is waited for at once (or the run is over)
        d.state = found_last ? StIdle : StWait;
        d.done  = found_last;
      end
      d.last = found_last;
    end

    if (abort_i) begin
      d.state = StIdle;
      d.req   = 1'b0;
      d.pend  = 1'b0;
      d.done  = 1'b0;
      d.err   = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q <= '0;
      q.cur_first <= LinkNone;
      q.root_first <= LinkNone;
    end else begin
      q <= d;
    end
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // One read at a time: a request is presented only with nothing outstanding.
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(q.req && q.pend))
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
                   q.state inside {StIdle, StWait, StStep, StNew})
    else $error("nasa_fusion_unit: illegal state %0d", q.state);
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(q.done && q.err))
    else $error("nasa_fusion_unit: done and error together");
  assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(q.count) <= NodeCap)
    else $error("nasa_fusion_unit: %0d nodes, NodeCap %0d", q.count, NodeCap);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({start_i, abort_i, mreq_o.valid, mrsp_i.ready, mrsp_i.valid}))
    else $error("nasa_fusion_unit: X on a control signal");
`endif
endmodule
