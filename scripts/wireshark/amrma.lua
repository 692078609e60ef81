-- SPDX-License-Identifier: BSD-3-Clause
-- Wireshark dissector for the amrma header (docs/wire-format.md), version 1.
--
--   tshark -X lua_script:scripts/wireshark/amrma.lua -r FILE -Y amrma
--   wireshark -X lua_script:scripts/wireshark/amrma.lua FILE
--
-- Registered on UDP ports base..base+63 (preference amrma.udp_base, default 7000).

local HDR_LEN = 40
local VERSION = 1
local MAX_ARGS = 8
local MAX_CTX = 64
local MAX_PAYLOAD = 9000
local NO_HANDLER = 0xffff
local SUB_LEN = 12
local MAX_BUNDLE = 64

local amrma = Proto("amrma", "amrma Active Messages")

local type_names = { [1] = "REQUEST", [2] = "REPLY", [3] = "ACK", [4] = "SEND" }

local f = amrma.fields
f.version = ProtoField.uint8("amrma.version", "Version", base.DEC)
f.type = ProtoField.uint8("amrma.type", "Type", base.DEC, type_names)
f.flags = ProtoField.uint8("amrma.flags", "Flags", base.HEX)
f.ack_valid = ProtoField.bool("amrma.flags.ack_valid", "ACK_VALID", 8, nil, 0x01)
f.more = ProtoField.bool("amrma.flags.more", "MORE (coalesced)", 8, nil, 0x02)
f.reserved = ProtoField.uint8("amrma.flags.reserved", "Reserved", base.HEX, nil, 0xfc)
f.nargs = ProtoField.uint8("amrma.nargs", "Arguments", base.DEC)
f.handler = ProtoField.uint16("amrma.handler", "Handler", base.DEC)
f.src_ctx = ProtoField.uint8("amrma.src_ctx", "Source context", base.DEC)
f.dst_ctx = ProtoField.uint8("amrma.dst_ctx", "Destination context", base.DEC)
f.src_node = ProtoField.uint16("amrma.src_node", "Source node", base.DEC)
f.dst_node = ProtoField.uint16("amrma.dst_node", "Destination node", base.DEC)
f.seq = ProtoField.uint32("amrma.seq", "Sequence", base.DEC)
f.ack = ProtoField.uint32("amrma.ack", "Cumulative ack", base.DEC)
f.sack = ProtoField.uint32("amrma.sack", "Selective ack", base.HEX)
f.token = ProtoField.uint32("amrma.token", "Token", base.HEX)
f.payload_len = ProtoField.uint16("amrma.payload_len", "Payload length", base.DEC)
f.status = ProtoField.int16("amrma.status", "Status", base.DEC)
f.src_epoch = ProtoField.uint32("amrma.src_epoch", "Source epoch", base.DEC)
f.dst_epoch = ProtoField.uint32("amrma.dst_epoch", "Destination epoch", base.DEC)
f.arg = ProtoField.uint64("amrma.arg", "Argument", base.HEX)
f.payload = ProtoField.bytes("amrma.payload", "Payload")
f.msgs = ProtoField.uint8("amrma.msgs", "Messages in frame", base.DEC)
-- the further messages of a coalesced frame (AMRMA_WIRE_F_MORE)
f.msg_type = ProtoField.uint8("amrma.msg.type", "Type", base.DEC, type_names)
f.msg_nargs = ProtoField.uint8("amrma.msg.nargs", "Arguments", base.DEC)
f.msg_handler = ProtoField.uint16("amrma.msg.handler", "Handler", base.DEC)
f.msg_payload_len = ProtoField.uint16("amrma.msg.payload_len", "Payload length", base.DEC)
f.msg_status = ProtoField.int16("amrma.msg.status", "Status", base.DEC)
f.msg_token = ProtoField.uint32("amrma.msg.token", "Token", base.HEX)

local ex_truncated = ProtoExpert.new("amrma.truncated", "amrma header truncated",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_version = ProtoExpert.new("amrma.bad_version", "Unknown amrma version",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_type = ProtoExpert.new("amrma.bad_type", "Unknown frame type",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_flags = ProtoExpert.new("amrma.bad_flags", "Reserved flag bits set",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_nargs = ProtoExpert.new("amrma.too_many_args", "More than 8 arguments",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_length = ProtoExpert.new("amrma.length_mismatch",
	"UDP payload length differs from 40 + 8 * nargs + payload_len (+ further messages)",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_msg = ProtoExpert.new("amrma.bad_message",
	"Malformed further message (type, arguments, handler, length or count)",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_payload = ProtoExpert.new("amrma.payload_too_long", "Payload over 9000 bytes",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_handler = ProtoExpert.new("amrma.bad_handler", "Handler not allowed here",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_ack = ProtoExpert.new("amrma.ack_not_empty", "ACK carries arguments or payload",
	expert.group.MALFORMED, expert.severity.ERROR)
local ex_ctx = ProtoExpert.new("amrma.ctx_port_mismatch",
	"Context differs from UDP port - base", expert.group.MALFORMED, expert.severity.ERROR)
amrma.experts = { ex_truncated, ex_version, ex_type, ex_flags, ex_nargs, ex_length,
	ex_payload, ex_handler, ex_ack, ex_ctx, ex_msg }

-- A message's arguments and payload from off, as far as the captured bytes go.
local function add_args_payload(tvb, t, off, nargs, plen)
	for _ = 1, nargs do
		if tvb:len() < off + 8 then
			return
		end
		t:add(f.arg, tvb(off, 8))
		off = off + 8
	end
	local avail = math.min(plen, tvb:len() - off)
	if avail > 0 then
		t:add(f.payload, tvb(off, avail))
	end
end

-- The further messages of a coalesced frame from off to len; returns how many.
local function dissect_more(tvb, t, off, len)
	local n = 0
	while off < len do
		if off + SUB_LEN > len or tvb:len() < off + SUB_LEN then
			t:add_proto_expert_info(ex_msg)
			break
		end
		local mtype = tvb(off, 1):uint()
		local nargs = tvb(off + 1, 1):uint()
		local handler = tvb(off + 2, 2):uint()
		local plen = tvb(off + 4, 2):uint()
		local size = SUB_LEN + 8 * nargs + plen
		local mt = t:add(amrma, tvb(off, math.min(size, tvb:len() - off)),
			string.format("Message %d: %s h=%d nargs=%d len=%d", n + 2,
				type_names[mtype] or ("type " .. mtype), handler, nargs, plen))
		mt:add(f.msg_type, tvb(off, 1))
		mt:add(f.msg_nargs, tvb(off + 1, 1))
		mt:add(f.msg_handler, tvb(off + 2, 2))
		mt:add(f.msg_payload_len, tvb(off + 4, 2))
		mt:add(f.msg_status, tvb(off + 6, 2))
		mt:add(f.msg_token, tvb(off + 8, 4))
		n = n + 1
		if (mtype ~= 1 and mtype ~= 2) or nargs > MAX_ARGS or plen > MAX_PAYLOAD or
		    off + size > len or n + 1 > MAX_BUNDLE or
		    (handler == NO_HANDLER and mtype == 1) or
		    (handler ~= NO_HANDLER and handler >= 256) then
			mt:add_proto_expert_info(ex_msg)
			break
		end
		add_args_payload(tvb, mt, off + SUB_LEN, nargs, plen)
		off = off + size
	end
	return n
end

amrma.prefs.udp_base = Pref.uint("UDP base port", 7000,
	"UDP port of context 0; ports base .. base+63 are decoded as amrma")

function amrma.dissector(tvb, pinfo, tree)
	-- reported length: what the UDP header says, even if the capture holds less
	local len = tvb:reported_length_remaining()
	pinfo.cols.protocol = "AMRMA"
	local t = tree:add(amrma, tvb())
	if tvb:len() < 1 then
		t:add_proto_expert_info(ex_truncated)
		return
	end
	local version = tvb(0, 1):uint()
	local vi = t:add(f.version, tvb(0, 1))
	if version ~= VERSION then
		-- never guess the layout of another version
		vi:add_proto_expert_info(ex_version)
		pinfo.cols.info = string.format("amrma version %d", version)
		return
	end
	if tvb:len() < HDR_LEN then
		t:add_proto_expert_info(ex_truncated)
		return
	end

	local ftype = tvb(1, 1):uint()
	local ti = t:add(f.type, tvb(1, 1))
	if not type_names[ftype] then
		ti:add_proto_expert_info(ex_type)
	end
	local flags = tvb(2, 1):uint()
	local fl = t:add(f.flags, tvb(2, 1))
	fl:add(f.ack_valid, tvb(2, 1))
	local mi = fl:add(f.more, tvb(2, 1))
	local more = bit.band(flags, 0x02) ~= 0
	if more and ftype == 3 then
		mi:add_proto_expert_info(ex_flags)
	end
	local ri = fl:add(f.reserved, tvb(2, 1))
	if bit.band(flags, 0xfc) ~= 0 then
		ri:add_proto_expert_info(ex_flags)
	end
	local nargs = tvb(3, 1):uint()
	local ni = t:add(f.nargs, tvb(3, 1))
	if nargs > MAX_ARGS then
		ni:add_proto_expert_info(ex_nargs)
	end
	local handler = tvb(4, 2):uint()
	local hi = t:add(f.handler, tvb(4, 2))
	if handler == NO_HANDLER then
		hi:append_text(" (no handler)")
	end
	-- REQUEST and SEND need a real handler, ACK must have none, REPLY may have either
	if (handler == NO_HANDLER and (ftype == 1 or ftype == 4)) or
	    (handler ~= NO_HANDLER and (handler >= 256 or ftype == 3)) then
		hi:add_proto_expert_info(ex_handler)
	end
	local base_port = amrma.prefs.udp_base
	local sci = t:add(f.src_ctx, tvb(6, 1))
	if tvb(6, 1):uint() ~= pinfo.src_port - base_port then
		sci:add_proto_expert_info(ex_ctx)
	end
	local dci = t:add(f.dst_ctx, tvb(7, 1))
	if tvb(7, 1):uint() ~= pinfo.dst_port - base_port then
		dci:add_proto_expert_info(ex_ctx)
	end
	t:add(f.src_node, tvb(8, 2))
	t:add(f.dst_node, tvb(10, 2))
	t:add(f.seq, tvb(12, 4))
	t:add(f.ack, tvb(16, 4))
	t:add(f.sack, tvb(20, 4))
	t:add(f.token, tvb(24, 4))
	local plen = tvb(28, 2):uint()
	local pi = t:add(f.payload_len, tvb(28, 2))
	if plen > MAX_PAYLOAD then
		pi:add_proto_expert_info(ex_payload)
	end
	t:add(f.status, tvb(30, 2))
	t:add(f.src_epoch, tvb(32, 4))
	local de = t:add(f.dst_epoch, tvb(36, 4))
	if tvb(36, 4):uint() == 0 then
		de:append_text(" (not known yet)")
	end
	local first_len = HDR_LEN + 8 * nargs + plen
	if (not more and len ~= first_len) or (more and len <= first_len) then
		pi:add_proto_expert_info(ex_length)
	end
	if ftype == 3 and (nargs > 0 or plen > 0) then
		ti:add_proto_expert_info(ex_ack)
	end

	-- decode what the frame holds, even when the lengths disagree
	add_args_payload(tvb, t, HDR_LEN, nargs, plen)
	local nmore = 0
	if more and len > first_len then
		nmore = dissect_more(tvb, t, first_len, len)
	end
	t:add(f.msgs, ftype == 3 and 0 or 1 + nmore):set_generated()

	pinfo.cols.info = string.format("%s seq=%d ctx %d->%d node %d->%d h=%d nargs=%d len=%d",
		type_names[ftype] or ("type " .. ftype), tvb(12, 4):uint(), tvb(6, 1):uint(),
		tvb(7, 1):uint(), tvb(8, 2):uint(), tvb(10, 2):uint(), tvb(4, 2):uint(), nargs, plen)
	if nmore > 0 then
		pinfo.cols.info = string.format("%s +%d coalesced", tostring(pinfo.cols.info), nmore)
	end
end

-- (Re)register the port range: called at load and whenever the preference changes.
local udp_table = DissectorTable.get("udp.port")
local registered_base = nil

local function register_ports(first)
	if registered_base == first then
		return
	end
	if registered_base then
		for p = registered_base, registered_base + MAX_CTX - 1 do
			udp_table:remove(p, amrma)
		end
	end
	for p = first, math.min(first + MAX_CTX - 1, 65535) do
		udp_table:add(p, amrma)
	end
	registered_base = first
end

function amrma.prefs_changed()
	register_ports(amrma.prefs.udp_base)
end

register_ports(amrma.prefs.udp_base)
