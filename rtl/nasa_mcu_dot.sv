// Dot-product unit of the `fpga` configuration's controller (docs/fpga.md "The board's core"):
// the firmware sets it up through six registers and it reads the int8 operands from main memory
// itself, one multiply-accumulate a cycle while both operand rows are at hand. A dot product is
// `runs` runs of `n` elements; element i of run j is x[X + j*XO + i*XI] (and w[W + j*WO + i*WI]):
// the taps of a (clipped) convolution window row by row, a depthwise channel, an FC row, a
// pooling window. Modes: MAC acc += x*w, SUM acc += x, MAX acc = max(acc, x).
// Registers (word k of the unit's page; writes and reads wait while the unit is busy):
//   0 X     x address; advanced by XO after each run (rewrite it for each dot product)
//   1 W     w address; likewise by WO
//   2 SHAPE n (15:0), runs (23:16), mode (25:24: 0 MAC, 1 SUM, 2 MAX)
//   3 XSTR  XI (15:0) | XO (31:16)
//   4 WSTR  WI (15:0) | WO (31:16)
//   5 ACC   write: the initial accumulator; starts the unit. Read: the result.
// Timing (fpga/model/mcu_system.cpp replays it): the unit runs from the cycle after the ACC write.
// Each cycle of a run either takes one element (both operand rows cached: the row caches, one
// 8-byte memory row each, are emptied at the start), or starts fetching the missing row, x
// first, over the memory port (one request, then the cycle its data arrives; the next cycle runs
// again). Two cycles after the
// last element the result is in ACC and the unit is idle again. While it runs the unit owns
// the memory port: the core's main-memory accesses wait.
module nasa_mcu_dot #(
  parameter int unsigned AddrBits = 17
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // register access from the core (a write takes effect when accepted: !busy_o)
  input  logic                we_i,
  input  logic [2:0]          reg_i,
  input  logic [31:0]         wdata_i,
  output logic [31:0]         acc_o,
  output logic                busy_o,
  // memory port (single-beat reads of 8-byte rows)
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic [AddrBits-1:0] req_addr_o,   // row aligned
  input  logic                rsp_valid_i,
  input  logic [63:0]         rsp_rdata_i
);
  localparam int unsigned AW = AddrBits;
  typedef enum logic [2:0] {DIdle, DRun, DReqX, DWaitX, DReqW, DWaitW, DDrain} dstate_e;
  localparam logic [1:0] ModeMac = 2'd0, ModeMax = 2'd2;  // (1: SUM)

  dstate_e st_q, st_d;
  // registers (all zero after reset)
  typedef struct packed {
    logic [AW-1:0] x;                            // run starts, element addresses
    logic [AW-1:0] w;
    logic [AW-1:0] xa;
    logic [AW-1:0] wa;
    logic [15:0]   n;
    logic [15:0]   xi;
    logic [15:0]   xo;
    logic [15:0]   wi;
    logic [15:0]   wo;
    logic [15:0]   ni;
    logic [7:0]    r;
    logic [7:0]    nr;
    logic [31:0]   acc;
    logic [63:0]   xw;                           // cached operand rows
    logic [63:0]   ww;
    logic [AW-4:0] xt;                           // their row addresses
    logic [AW-4:0] wt;
    logic          xv;
    logic          wv;
    logic          drain;
    logic          pv;
    logic          pv2;
  } regs_t;
  regs_t q;
  logic [1:0] mode_q;

  assign busy_o = (st_q != DIdle);
  assign acc_o  = q.acc;

  logic x_hit, w_hit, take;
  assign x_hit = q.xv && (q.xt == q.xa[AW-1:3]);
  assign w_hit = (mode_q != ModeMac) || (q.wv && (q.wt == q.wa[AW-1:3]));
  assign take  = (st_q == DRun) && x_hit && w_hit;

  // memory requests: presented from the DRun cycle that finds a row missing
  logic want_x, want_w;
  assign want_x = ((st_q == DRun) && !x_hit) || (st_q == DReqX);
  assign want_w = ((st_q == DRun) && x_hit && !w_hit) || (st_q == DReqW);
  assign req_valid_o = want_x || want_w;
  assign req_addr_o  = want_x ? {q.xa[AW-1:3], 3'b000} : {q.wa[AW-1:3], 3'b000};

  // the multiply pipeline: operands registered, product registered, then accumulated
  logic signed [7:0] xb_q, wb_q;
  logic signed [15:0] pr_q;
  logic [7:0] xbyte, wbyte;
  assign xbyte = q.xw[8*q.xa[2:0] +: 8];
  assign wbyte = (mode_q == ModeMac) ? q.ww[8*q.wa[2:0] +: 8] : 8'd1;
  always_ff @(posedge clk_i) begin
    xb_q <= xbyte;
    wb_q <= wbyte;
    pr_q <= (mode_q == ModeMax) ? 16'(xb_q) : xb_q * wb_q;
  end
  logic [31:0] pr_ext;
  assign pr_ext = 32'(pr_q);

  // next element: within the run, or the start of the next run
  logic run_end, last;
  assign run_end = (q.ni == 16'd1);
  assign last    = run_end && (q.nr == 8'd1);
  logic [AW-1:0] x_next, w_next;
  assign x_next = run_end ? q.x + AW'(q.xo) : q.xa + AW'(q.xi);
  assign w_next = run_end ? q.w + AW'(q.wo) : q.wa + AW'(q.wi);

  // next state: an ACC write starts the unit (DDrain at once for an empty dot product); DRun
  // takes an element or fetches the missing row, x first
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      DIdle: begin
        if (we_i && (reg_i == 3'd5)) st_d = (q.n == '0 || q.r == '0) ? DDrain : DRun;
      end
      DRun: begin
        if (take) begin
          if (last) st_d = DDrain;
        end else if (!x_hit) begin
          st_d = req_ready_i ? DWaitX : DReqX;
        end else begin
          st_d = req_ready_i ? DWaitW : DReqW;
        end
      end
      DReqX: if (req_ready_i) st_d = DWaitX;
      DReqW: if (req_ready_i) st_d = DWaitW;
      DWaitX: if (rsp_valid_i) st_d = DRun;
      DWaitW: if (rsp_valid_i) st_d = DRun;
      DDrain: if (q.drain) st_d = DIdle;
      default: st_d = DIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q    <= DIdle;
      q <= '0;
      mode_q  <= ModeMac;
    end else begin
      st_q  <= st_d;
      q.pv  <= take;
      q.pv2 <= q.pv;
      if (q.pv2) begin
        if (mode_q != ModeMax) q.acc <= q.acc + pr_ext;
        else if ($signed(pr_ext) > $signed(q.acc)) q.acc <= pr_ext;
      end
      unique case (st_q)
        DIdle: begin
          if (we_i) begin
            unique case (reg_i)
              3'd0: q.x <= wdata_i[AW-1:0];
              3'd1: q.w <= wdata_i[AW-1:0];
              3'd2: begin
                q.n    <= wdata_i[15:0];
                q.r    <= wdata_i[23:16];
                mode_q <= wdata_i[25:24];
              end
              3'd3: begin
                q.xi <= wdata_i[15:0];
                q.xo <= wdata_i[31:16];
              end
              3'd4: begin
                q.wi <= wdata_i[15:0];
                q.wo <= wdata_i[31:16];
              end
              3'd5: begin
                q.acc <= wdata_i;
                q.xa  <= q.x;
                q.wa  <= q.w;
                q.ni  <= q.n;
                q.nr  <= q.r;
                q.xv  <= 1'b0;
                q.wv  <= 1'b0;
                if (q.n == '0 || q.r == '0) q.drain <= 1'b0;
              end
              default: ;
            endcase
          end
        end
        DRun: begin
          if (take) begin
            q.xa <= x_next;
            q.wa <= w_next;
            if (run_end) begin
              q.x  <= x_next;
              q.w  <= w_next;
              q.ni <= q.n;
              q.nr <= q.nr - 8'd1;
            end else begin
              q.ni <= q.ni - 16'd1;
            end
            if (last) q.drain <= 1'b0;
          end
        end
        DWaitX: begin
          if (rsp_valid_i) begin
            q.xw <= rsp_rdata_i;
            q.xt <= q.xa[AW-1:3];
            q.xv <= 1'b1;
          end
        end
        DWaitW: begin
          if (rsp_valid_i) begin
            q.ww <= rsp_rdata_i;
            q.wt <= q.wa[AW-1:3];
            q.wv <= 1'b1;
          end
        end
        DDrain: q.drain <= 1'b1;
        default: ;
      endcase
    end
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Memory port, valid/ready: a read waiting for ready is held, unchanged, until accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (req_valid_o && !req_ready_i) |=> (req_valid_o && $stable(req_addr_o)))
    else $error("nasa_mcu_dot: request changed or withdrawn while stalled");
  // FSM legality (rsp_valid_i is the shared port's: it also carries the core's read data).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q inside {DIdle, DRun, DReqX, DWaitX, DReqW, DWaitW, DDrain})
    else $error("nasa_mcu_dot: illegal state %0d", st_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({we_i, req_valid_o, req_ready_i, rsp_valid_i}))
    else $error("nasa_mcu_dot: X on a control signal");
`endif
endmodule
