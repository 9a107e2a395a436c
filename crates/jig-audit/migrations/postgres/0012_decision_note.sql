-- What the person who decided an approval wrote (a denial's reason, an approval's comment):
-- shown to who asked and on the queue. The decision's packet in the chain carries it too.
ALTER TABLE approvals ADD COLUMN note TEXT;
