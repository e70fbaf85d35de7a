DROP TRIGGER serves_record_judge ON admission.serves;
DROP FUNCTION admission.serves_record_judge();
ALTER TABLE admission.artifacts DROP COLUMN judged_by;
