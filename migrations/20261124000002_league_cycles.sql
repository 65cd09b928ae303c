-- How many times a league plays its round robin (2: a double round robin, the seats swapped in the
-- second cycle).
alter table leagues add column cycles integer not null default 1 check (cycles >= 1);
